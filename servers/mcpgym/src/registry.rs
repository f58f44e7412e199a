//! What an environment registers with the binary, once: its name, its flags and how it is
//! built from them. The environment subcommands, their `--help`, the jail set-up and what
//! `serve` hosts are all derived from the table in [`crate::envs`].

use std::sync::Arc;

use clap::Args;
use mcpgym_shared::Environment;
use mcpgym_shared::cli::{CommonArgs, TransportArgs};
use mcpgym_shared::env::{BoxFuture, EpisodeSpec, EpisodeState, StartError};

use crate::envs::ENVIRONMENTS;
use crate::jails::QuotaArgs;

/// An environment's own flags, and how they become a running environment.
pub trait EnvFlags: clap::Args + std::fmt::Debug + Send + 'static {
    /// The subcommand, and the environment's name (its `Environment::name`).
    const NAME: &'static str;
    /// The subcommand's one-line help.
    const ABOUT: &'static str;
    /// The help heading of these flags.
    const HEADING: &'static str;
    /// Whether episodes run in jails: the subcommand then takes the jail size flags, and the
    /// process enters a private mount namespace first.
    const JAILS: bool;

    /// The environment these flags describe, with jails of these sizes.
    fn build(self, quotas: &QuotaArgs) -> anyhow::Result<Built>;

    /// The environment these flags describe, only to read its tasks, tools and prompts (the
    /// task and trajectory exports): no episode is started on it. An environment whose build
    /// starts services episodes need (a sandbox pool) builds it without them.
    fn catalog(self, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        self.build(quotas)
    }

    /// The environment as `serve` (and `replay`) host it beside the others: as [`EnvFlags::build`]
    /// unless something it needs is missing here in a way only its episodes should feel (the
    /// Jupyter runtime not installed); then it may be an [`Unstartable`] one, so the other
    /// environments still serve.
    fn build_hosted(self, quotas: &QuotaArgs) -> anyhow::Result<Built>
    where
        Self: Sized,
    {
        self.build(quotas)
    }
}

/// A built environment and what it relies on while it serves.
pub struct Built {
    /// The environment.
    pub env: Arc<dyn Environment>,
    /// A local sandbox service, the desktops' folder: released once serving has ended.
    pub backing: Option<Box<dyn Backing>>,
}

impl Built {
    /// An environment that relies on nothing else.
    pub fn alone(env: Arc<dyn Environment>) -> Self {
        Self { env, backing: None }
    }

    /// Releases what the environment relied on. Call after the environment is dropped.
    pub fn release(backing: Option<Box<dyn Backing>>) {
        if let Some(backing) = backing {
            backing.release();
        }
    }
}

/// Something an environment relies on while it serves.
pub trait Backing {
    /// Stops or removes it.
    fn release(self: Box<Self>);
}

/// An environment whose episodes cannot start here, saying why: its tasks and tools are
/// listed as usual, and every start fails with the sentence (a `503` on the control plane).
pub struct Unstartable {
    /// The environment, never started.
    pub env: Arc<dyn Environment>,
    /// Why no episode starts, and what to do.
    pub why: &'static str,
}

impl Environment for Unstartable {
    fn name(&self) -> &'static str {
        self.env.name()
    }

    fn instructions(&self) -> &str {
        self.env.instructions()
    }

    fn tasks(&self) -> &mcpgym_shared::task::TaskSet {
        self.env.tasks()
    }

    fn tools(&self) -> &[rmcp::model::Tool] {
        self.env.tools()
    }

    fn default_max_turns(&self) -> u32 {
        self.env.default_max_turns()
    }

    fn default_max_episodes(&self) -> Option<usize> {
        self.env.default_max_episodes()
    }

    fn exports(&self) -> &[&'static str] {
        self.env.exports()
    }

    fn reports_progress(&self) -> bool {
        self.env.reports_progress()
    }

    fn resumable(&self) -> bool {
        self.env.resumable()
    }

    fn lost_on_restart(&self) -> &'static str {
        self.env.lost_on_restart()
    }

    fn oracle(&self, task: &str) -> Option<Box<dyn mcpgym_shared::oracle::Oracle>> {
        self.env.oracle(task)
    }

    fn rescore<'a>(
        &'a self,
        record: &'a mcpgym_shared::rescore::EpisodeRecord,
    ) -> BoxFuture<'a, Result<mcpgym_shared::rescore::Rescored, mcpgym_shared::rescore::RescoreError>>
    {
        self.env.rescore(record)
    }

    fn start<'a>(
        &'a self,
        _spec: &'a EpisodeSpec,
    ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>> {
        Box::pin(async { Err(StartError::Unavailable(self.why.to_owned())) })
    }
}

/// Parsed flags of some environment, their type erased.
trait Build: std::fmt::Debug + Send {
    fn build(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built>;
    fn catalog(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built>;
    fn build_hosted(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built>;
}

impl<F: EnvFlags> Build for F {
    fn build(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        EnvFlags::build(*self, quotas)
    }

    fn catalog(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        EnvFlags::catalog(*self, quotas)
    }

    fn build_hosted(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        EnvFlags::build_hosted(*self, quotas)
    }
}

/// One environment's entry in the table.
pub struct Registration {
    /// [`EnvFlags::NAME`].
    pub name: &'static str,
    /// [`EnvFlags::ABOUT`].
    about: &'static str,
    /// [`EnvFlags::HEADING`].
    heading: &'static str,
    /// [`EnvFlags::JAILS`].
    pub jails: bool,
    /// Its flags, or its constructor when it has none.
    flags: Flags,
}

/// How a registered environment is configured.
#[derive(Clone, Copy)]
enum Flags {
    /// By flags of its own.
    Own {
        /// Adds the environment's flags to a command.
        add: fn(clap::Command) -> clap::Command,
        /// Reads them back.
        parse: fn(&clap::ArgMatches) -> Result<Box<dyn Build>, clap::Error>,
    },
    /// Not at all: built by this function.
    None(fn() -> Arc<dyn Environment>),
}

/// An environment without flags, ready to be built.
#[derive(Debug)]
struct Plain(fn() -> Arc<dyn Environment>);

impl Build for Plain {
    fn build(self: Box<Self>, _quotas: &QuotaArgs) -> anyhow::Result<Built> {
        Ok(Built::alone((self.0)()))
    }

    fn catalog(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        self.build(quotas)
    }

    fn build_hosted(self: Box<Self>, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        self.build(quotas)
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn parse<F: EnvFlags>(matches: &clap::ArgMatches) -> Result<Box<dyn Build>, clap::Error> {
    Ok(Box::new(F::from_arg_matches(matches)?))
}

impl Registration {
    /// The entry of the environment `F` describes.
    pub const fn of<F: EnvFlags>() -> Self {
        Self {
            name: F::NAME,
            about: F::ABOUT,
            heading: F::HEADING,
            jails: F::JAILS,
            flags: Flags::Own {
                add: F::augment_args,
                parse: parse::<F>,
            },
        }
    }

    /// The entry of an environment without flags of its own: its name (its
    /// `Environment::name`), one line of help, and its constructor. It runs without jails.
    pub const fn plain(
        name: &'static str,
        about: &'static str,
        new: fn() -> Arc<dyn Environment>,
    ) -> Self {
        Self {
            name,
            about,
            heading: "",
            jails: false,
            flags: Flags::None(new),
        }
    }

    fn add_flags(&self, command: clap::Command) -> clap::Command {
        match self.flags {
            Flags::Own { add, .. } => add(command.next_help_heading(self.heading)),
            Flags::None(_) => command,
        }
    }

    fn parse(&self, matches: &clap::ArgMatches) -> Result<Box<dyn Build>, clap::Error> {
        match self.flags {
            Flags::Own { parse, .. } => parse(matches),
            Flags::None(new) => Ok(Box::new(Plain(new))),
        }
    }

    /// The registered environment called `name`.
    pub fn find(name: &str) -> Option<&'static Self> {
        ENVIRONMENTS.iter().find(|env| env.name == name)
    }

    /// The environment's subcommand: the transport and common flags, its own flags under its
    /// heading, and the jail sizes if it uses jails.
    fn command(&self) -> clap::Command {
        let command = clap::Command::new(self.name);
        let command = CommonArgs::augment_args(TransportArgs::augment_args(command));
        let command = self.add_flags(command);
        let command = if self.jails {
            QuotaArgs::augment_args(command.next_help_heading("Jails"))
        } else {
            command
        };
        // Last: each flattened type sets its own doc comment as the command's help.
        command.about(self.about).long_about(None)
    }

    /// The environment with every flag at its default, with jails of these sizes, hosted
    /// beside others (see [`EnvFlags::build_hosted`]).
    pub fn build_default(&self, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        self.checked(self.parse_args(&[])?.build_hosted(quotas)?)
    }

    /// The environment its own flags `args` describe (as `mcpgym <env>` takes them), built
    /// only to read its tasks, tools and prompts ([`EnvFlags::catalog`]).
    /// The environment built from its own flags `args` (as `mcpgym ENV` takes them), with
    /// jails of `quotas`: what `mcpgym eval` plays on.
    pub fn build_with(&self, args: &[String], quotas: &QuotaArgs) -> anyhow::Result<Built> {
        let flags = self.parse_args(args)?;
        self.build(flags, quotas)
    }

    pub fn catalog(&self, args: &[String]) -> anyhow::Result<Built> {
        let flags = self.parse_args(args)?;
        self.checked(flags.catalog(&QuotaArgs::defaults()?)?)
    }

    /// The environment's own flags read from `args` (no transport, common or jail flags).
    fn parse_args(&self, args: &[String]) -> anyhow::Result<Box<dyn Build>> {
        let matches = self
            .add_flags(clap::Command::new(self.name))
            .no_binary_name(true)
            .try_get_matches_from(args)?;
        Ok(self.parse(&matches)?)
    }

    fn build(&self, flags: Box<dyn Build>, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        self.checked(flags.build(quotas)?)
    }

    /// `built`, unless the environment calls itself by another name than its registration's.
    fn checked(&self, built: Built) -> anyhow::Result<Built> {
        if built.env.name() != self.name {
            let actual = built.env.name();
            Built::release(built.backing);
            anyhow::bail!(
                "the environment registered as {:?} calls itself {actual:?}; the names must match",
                self.name
            );
        }
        Ok(built)
    }
}

/// `mcpgym <env> ...`: one registered environment with its flags.
#[derive(Debug)]
pub struct EnvCommand {
    /// Which environment.
    pub registration: &'static Registration,
    /// `--http` or stdio.
    pub transport: TransportArgs,
    /// Flags every environment takes.
    pub common: CommonArgs,
    /// Jail sizes (their defaults for an environment without jails).
    pub quotas: QuotaArgs,
    flags: Box<dyn Build>,
}

impl EnvCommand {
    /// The environment the flags describe.
    pub fn build(self) -> anyhow::Result<(Built, TransportArgs, CommonArgs)> {
        let built = self.registration.build(self.flags, &self.quotas)?;
        Ok((built, self.transport, self.common))
    }
}

impl clap::FromArgMatches for EnvCommand {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, matches)) = matches.subcommand() else {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::MissingSubcommand,
                "name an environment",
            ));
        };
        let Some(registration) = Registration::find(name) else {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidSubcommand,
                format!("{name:?} is not an environment"),
            ));
        };
        Ok(Self {
            registration,
            transport: TransportArgs::from_arg_matches(matches)?,
            common: CommonArgs::from_arg_matches(matches)?,
            quotas: if registration.jails {
                QuotaArgs::from_arg_matches(matches)?
            } else {
                QuotaArgs::defaults()?
            },
            flags: registration.parse(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for EnvCommand {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        ENVIRONMENTS
            .iter()
            .fold(command, |command, env| command.subcommand(env.command()))
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        Registration::find(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::{Cli, Command};

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_environment_has_its_subcommand() {
        for registration in ENVIRONMENTS {
            let cli = Cli::try_parse_from(["mcpgym", registration.name]).unwrap();
            let Command::Env(env) = cli.command else {
                panic!("`mcpgym {}` is not an environment", registration.name);
            };
            assert_eq!(env.registration.name, registration.name);
            let help = Cli::command()
                .find_subcommand_mut(registration.name)
                .unwrap()
                .render_long_help()
                .to_string();
            assert!(help.contains("--http <ADDR>"), "{help}");
            assert_eq!(
                help.contains("--home-size <SIZE>"),
                registration.jails,
                "{help}"
            );
        }
    }

    #[test]
    fn choice_flags_read_every_choice() {
        let cli = Cli::try_parse_from([
            "mcpgym",
            "desktop",
            "--action-space",
            "qwen3vl",
            "--reward",
            "partial",
        ])
        .unwrap();
        let Command::Env(env) = cli.command else {
            panic!("not an environment");
        };
        let flags = format!("{:?}", env.flags);
        assert!(
            flags.contains("action_space: Qwen3vl") && flags.contains("reward: Partial"),
            "{flags}"
        );
        let refused = Cli::try_parse_from(["mcpgym", "wordle", "--reward", "dense"]).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("[possible values: sparse, shaped]"),
            "{refused}"
        );
    }

    #[test]
    fn an_environment_is_built_under_its_registered_name() {
        let quotas = QuotaArgs::defaults().unwrap();
        let built = Registration::find("wordle")
            .unwrap()
            .build_default(&quotas)
            .unwrap();
        assert_eq!(built.env.name(), "wordle");
        Built::release(built.backing);
    }
}
