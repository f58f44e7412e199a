//! Taking up, at start, what a previous server left in the trajectory directory: the
//! journal ([`crate::trajectory::sink`]) says which episodes were unfinished and which ended
//! last.

use std::sync::Arc;

use super::{Hub, is_episode_id};
use crate::env::{Environment, EpisodeSpec};
use crate::episode::{Episode, EpisodeHeader, EpisodeStatus};
use crate::replica;
use crate::store::EpisodeSlot;
use crate::trajectory::file::RecordedEpisode;
use crate::trajectory::{SessionRecord, TrajectoryEnd, TrajectorySink, now_rfc3339};

/// A door's client session a previous server held, bound to its episode: [`Hub::resume`]
/// holds legacy MCP sessions again itself and keeps the others for their doors
/// ([`Hub::take_restored_sessions`]).
#[derive(Debug, Clone)]
pub struct RestoredSession {
    /// The session.
    pub session: SessionRecord,
    /// Its episode's environment.
    pub env: &'static str,
    /// Its episode (the newest it started).
    pub episode: String,
}

/// What [`Hub::resume`] took up from a previous server's trajectory directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Unfinished episodes rebuilt and live again.
    pub resumed: usize,
    /// Unfinished episodes that could not be, now ended as aborted.
    pub aborted: usize,
    /// Finished episodes readable again.
    pub finished: usize,
}

impl Hub {
    /// Takes up what a previous server left in the trajectory directory (see
    /// [`crate::trajectory::sink`]), before serving: the last `--max-finished` episodes to end
    /// are readable again; each unfinished one of a [`resumable`](Environment::resumable)
    /// environment is rebuilt from its file and goes on where it stood, with the answers its
    /// idempotency keys got; any other is ended as aborted, saying why
    /// ([`Environment::lost_on_restart`]). Nothing is paid again: a rebuilt episode's calls
    /// must answer as recorded. Only this replica's episodes are taken.
    pub async fn resume(&self) -> std::io::Result<Resumed> {
        let mut report = Resumed::default();
        let Some(sink) = self.sink.clone() else {
            return Ok(report);
        };
        let keep = self.settings.max_finished;
        let listing = sink.clone();
        let (unfinished, ended) = tokio::task::spawn_blocking(move || {
            Ok::<_, std::io::Error>((listing.unfinished()?, listing.last_ended(keep)?))
        })
        .await
        .map_err(std::io::Error::other)??;
        // Each session's newest episode, by start time.
        let mut sessions: std::collections::HashMap<String, (String, RestoredSession)> =
            std::collections::HashMap::new();
        let mut note_session = |env: &Arc<dyn Environment>, recorded: &RecordedEpisode| {
            let Some(header) = &recorded.header else {
                return;
            };
            let Some(session) = &header.session else {
                return;
            };
            let id = session.id().to_owned();
            let restored = RestoredSession {
                session: session.clone(),
                env: env.name(),
                episode: recorded.id.clone(),
            };
            match sessions.get(&id) {
                Some((time, _)) if *time > header.time => {}
                _ => {
                    sessions.insert(id, (header.time.clone(), restored));
                }
            }
        };
        for id in ended {
            if let Some((env, recorded)) = self.recorded(&sink, &id).await
                && let Some(end) = &recorded.end
            {
                let status = EpisodeStatus::from_recorded(env.name(), end);
                // Closed unfinished (deleted, reaped): it was not readable before the restart
                // either, and its file still serves its trajectory.
                if !status.done {
                    continue;
                }
                note_session(&env, &recorded);
                self.restore_finished(env, &recorded, status);
                report.finished += 1;
            }
        }
        for id in unfinished {
            let Some((env, recorded)) = self.recorded(&sink, &id).await else {
                continue;
            };
            note_session(&env, &recorded);
            let reason = if env.resumable() {
                match self.resume_one(&env, &recorded, &sink).await {
                    Ok(()) => {
                        report.resumed += 1;
                        continue;
                    }
                    Err(why) => why,
                }
            } else {
                env.lost_on_restart().to_owned()
            };
            let mut status = EpisodeStatus::from_recorded(env.name(), &recorded.status());
            status.done = true;
            status.aborted = true;
            status.abort_reason = Some(reason);
            let id: Arc<str> = id.as_str().into();
            sink.end(
                &id,
                TrajectoryEnd {
                    record: "end",
                    time: now_rfc3339(),
                    status: status.clone(),
                    graded: None,
                },
            );
            sink.close(&id);
            self.restore_finished(env, &recorded, status);
            report.aborted += 1;
        }
        sink.synced().await;
        let mut doors = Vec::new();
        for (_, restored) in sessions.into_values() {
            match &restored.session {
                SessionRecord::Mcp {
                    id,
                    endpoint,
                    initialize,
                } => {
                    if let Err(full) =
                        self.sessions
                            .restore(id, *endpoint, initialize, &restored.episode)
                    {
                        tracing::warn!(%full, "a legacy MCP session is not held again");
                    }
                }
                SessionRecord::Ors { .. } | SessionRecord::OpenEnv { .. } => doors.push(restored),
            }
        }
        *self
            .restored_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = doors;
        Ok(report)
    }

    /// The door sessions (other than legacy MCP ones) [`Hub::resume`] found that `of_door`
    /// says are its door's, for it to hold again; each is handed out once.
    pub fn take_restored_sessions(
        &self,
        of_door: impl Fn(&SessionRecord) -> bool,
    ) -> Vec<RestoredSession> {
        let mut held = self
            .restored_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (taken, left) = std::mem::take(&mut *held)
            .into_iter()
            .partition(|restored| of_door(&restored.session));
        *held = left;
        taken
    }

    /// The trajectory file of episode `id` and its environment, when the id is this
    /// replica's, the file has a header, and its environment is hosted here. A marker whose
    /// file has no header (the server stopped between the two) is removed.
    async fn recorded(
        &self,
        sink: &TrajectorySink,
        id: &str,
    ) -> Option<(Arc<dyn Environment>, RecordedEpisode)> {
        let here = self.settings.replica.as_ref().map(|name| name.as_str());
        if !is_episode_id(id) || replica::owner_of_episode(id) != here {
            return None;
        }
        let path = sink.path_for(id);
        let text = tokio::fs::read_to_string(&path).await.ok()?;
        let recorded = match RecordedEpisode::parse(id, &path.display().to_string(), &text) {
            Ok(recorded) => recorded,
            Err(error) => {
                tracing::warn!(%error, "a trajectory file cannot be taken up");
                return None;
            }
        };
        let Some(header) = &recorded.header else {
            let marker = sink.dir().join(crate::trajectory::sink::LIVE_DIR).join(id);
            let _ = tokio::fs::remove_file(marker).await;
            return None;
        };
        let env = self.envs.get(header.env.as_str())?.clone();
        Some((env, recorded))
    }

    /// Rebuilds one unfinished, resumable episode into the live store; why not, as the reason
    /// it is aborted.
    async fn resume_one(
        &self,
        env: &Arc<dyn Environment>,
        recorded: &RecordedEpisode,
        sink: &TrajectorySink,
    ) -> Result<(), String> {
        let header = recorded.header.as_ref().ok_or("no header")?;
        let rebuilt =
            |why: String| format!("the server restarted and could not rebuild this episode: {why}");
        let reservation = self
            .store
            .reserve(env.name())
            .map_err(|_| rebuilt(format!("{} holds its most live episodes", env.name())))?;
        let spec = EpisodeSpec {
            task: header.task.clone(),
            seed: header.seed,
            options: header.options.clone(),
        };
        let state = env.start(&spec).await.map_err(|e| rebuilt(e.to_string()))?;
        let mut episode = Episode::resume(
            episode_header(env.as_ref(), recorded, header),
            state,
            recorded,
            Some(sink.clone()),
        )
        .await
        .map_err(rebuilt)?;
        let released = episode.retire(env.exports());
        let metrics = self.metrics.env(env.name()).cloned();
        let slot = self
            .store
            .insert(reservation, env.clone(), metrics, episode);
        // The file said the last call ended the episode but the server stopped before its end
        // record: it ends now, as it did then.
        if released.is_some() {
            self.finished(&slot, released);
        }
        tracing::info!(episode = %slot.id, env = env.name(), turn = slot.status().turn, "episode resumed");
        Ok(())
    }

    /// Makes a finished episode read back from its file readable like one that ended here.
    fn restore_finished(
        &self,
        env: Arc<dyn Environment>,
        recorded: &RecordedEpisode,
        status: EpisodeStatus,
    ) {
        let Some(header) = &recorded.header else {
            return;
        };
        let over = match &status.abort_reason {
            Some(reason) => format!("The episode was aborted: {reason}. Start a new episode."),
            None => crate::env::OVER_MESSAGE.to_owned(),
        };
        let episode = Episode::restored(
            episode_header(env.as_ref(), recorded, header),
            &status,
            over,
        );
        let metrics = self.metrics.env(env.name()).cloned();
        let started = mcpgym_serve::parse_rfc3339(&header.time).unwrap_or(std::time::UNIX_EPOCH);
        self.finished_episodes.insert(EpisodeSlot::finished(
            env, metrics, episode, status, started,
        ));
    }
}

/// The episode header a trajectory file's header describes.
fn episode_header(
    env: &dyn Environment,
    recorded: &RecordedEpisode,
    header: &crate::trajectory::TrajectoryHeader,
) -> EpisodeHeader {
    EpisodeHeader {
        id: recorded.id.as_str().into(),
        env: env.name(),
        task: header.task.clone(),
        seed: header.seed,
        max_turns: header.max_turns,
        options: header.options.clone(),
        session: header.session.clone(),
        test_secret: header.test_secret.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use rmcp::model::{JsonObject, Tool};
    use serde_json::json;

    use super::*;
    use crate::env::{BoxFuture, EpisodeState, StartError};
    use crate::hub::{CreateEpisode, HubSettings};
    use crate::task::TaskSet;

    /// Hi-Lo, but as an environment whose episodes cannot be rebuilt from their calls.
    struct Unrebuildable(Arc<dyn Environment>);

    impl Environment for Unrebuildable {
        fn name(&self) -> &'static str {
            "hilo"
        }
        fn instructions(&self) -> &str {
            self.0.instructions()
        }
        fn tasks(&self) -> &TaskSet {
            self.0.tasks()
        }
        fn tools(&self) -> &[Tool] {
            self.0.tools()
        }
        fn default_max_turns(&self) -> u32 {
            self.0.default_max_turns()
        }
        fn lost_on_restart(&self) -> &'static str {
            "the server restarted; this episode's kernel was lost"
        }
        fn start<'a>(
            &'a self,
            spec: &'a EpisodeSpec,
        ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>> {
            self.0.start(spec)
        }
    }

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "mcpgym-resume-{name}-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn hub(dir: &Path, env: Arc<dyn Environment>) -> Arc<Hub> {
        let settings = HubSettings {
            trajectory_dir: Some(dir.to_owned()),
            ..HubSettings::default()
        };
        Hub::new(vec![env], settings).unwrap()
    }

    async fn start(hub: &Hub) -> String {
        let request = CreateEpisode {
            task: Some("1-to-100".into()),
            seed: Some(7),
            ..CreateEpisode::default()
        };
        hub.create(request).await.unwrap().id
    }

    fn number(n: u64) -> JsonObject {
        JsonObject::from_iter([("number".to_owned(), json!(n))])
    }

    fn lines_of(dir: &Path, id: &str, kind: &str) -> usize {
        std::fs::read_to_string(dir.join(format!("{id}.jsonl")))
            .unwrap()
            .lines()
            .filter(|line| line.contains(&format!("\"record\":\"{kind}\"")))
            .count()
    }

    #[tokio::test]
    async fn a_resumable_episode_goes_on_where_it_stood_with_its_keyed_answers() {
        let dir = folder("resumable");
        let (killed, shut_down);
        let (first_answer, return_before);
        {
            // Dropped without closing anything: as the server killed with SIGKILL leaves it.
            let before = hub(&dir, mcpgym_hilo::new());
            killed = start(&before).await;
            before
                .step_keyed(&killed, "guess", number(50), Some("k1"))
                .await
                .unwrap();
            first_answer = before
                .step_keyed(&killed, "guess", number(25), Some("k2"))
                .await
                .unwrap();
            return_before = before.status(&killed).await.unwrap().return_;
            // Shut down as SIGTERM does: the episode's file is left open for the next start.
            shut_down = start(&before).await;
            before
                .step(&shut_down, "rules", JsonObject::new())
                .await
                .unwrap();
            before.close_all().await;
        }
        let after = hub(&dir, mcpgym_hilo::new());
        let report = after.resume().await.unwrap();
        assert_eq!(report.resumed, 2, "{report:?}");
        assert_eq!((report.aborted, report.finished), (0, 0));
        let status = after.status(&killed).await.unwrap();
        assert_eq!((status.turn, status.done), (2, false));
        assert!((status.return_ - return_before).abs() < 1e-12);
        // The retry of the last call gets its answer again, and plays nothing.
        let retried = after
            .step_keyed(&killed, "guess", number(25), Some("k2"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&retried).unwrap(),
            serde_json::to_value(&first_answer).unwrap()
        );
        assert_eq!(after.answer(&killed, "k1").await.unwrap().turn, 1);
        let next = after.step(&killed, "guess", number(12)).await.unwrap();
        assert_eq!(next.turn, 3);
        assert_eq!(after.status(&shut_down).await.unwrap().turn, 1);
        // The file holds each call once: nothing was written again on the way back.
        assert_eq!(lines_of(&dir, &killed, "step"), 3);
        assert_eq!(lines_of(&dir, &killed, "header"), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn an_episode_that_cannot_be_rebuilt_ends_aborted_and_says_why_once() {
        let dir = folder("lost");
        let lost_env = || Arc::new(Unrebuildable(mcpgym_hilo::new())) as Arc<dyn Environment>;
        let (lost, won);
        {
            let before = hub(&dir, lost_env());
            lost = start(&before).await;
            before.step(&lost, "guess", number(50)).await.unwrap();
            // One played to its end, by bisection.
            won = start(&before).await;
            let (mut low, mut high) = (1, 100);
            loop {
                let guess = u64::midpoint(low, high);
                let step = before.step(&won, "guess", number(guess)).await.unwrap();
                let hint = step.structured.as_ref().unwrap()["hint"].clone();
                match hint.as_str() {
                    Some("higher") => low = guess + 1,
                    Some("lower") => high = guess - 1,
                    _ => break,
                }
            }
        }
        let won_status = {
            let after = hub(&dir, lost_env());
            let report = after.resume().await.unwrap();
            assert_eq!((report.resumed, report.aborted, report.finished), (0, 1, 1));
            let status = after.status(&lost).await.unwrap();
            assert!(status.done && status.aborted, "{status:?}");
            assert_eq!(
                status.abort_reason.as_deref(),
                Some("the server restarted; this episode's kernel was lost")
            );
            assert_eq!(status.turn, 1);
            let refused = after.step(&lost, "guess", number(10)).await.unwrap();
            assert!(refused.is_error && refused.text().contains("kernel was lost"));
            assert_eq!(refused.turn, 1);
            assert_eq!(after.trajectory(&lost, 0).await.unwrap().lines().count(), 1);
            let won_status = after.status(&won).await.unwrap();
            assert!(won_status.done && !won_status.aborted);
            assert!(won_status.revealed.contains_key("number"));
            assert!(after.step(&won, "guess", number(1)).await.unwrap().is_error);
            won_status
        };
        // A second restart finds both ended: readable, never aborted or paid again.
        let again = hub(&dir, lost_env());
        let report = again.resume().await.unwrap();
        assert_eq!((report.resumed, report.aborted, report.finished), (0, 0, 2));
        assert!(again.status(&lost).await.unwrap().aborted);
        let status = again.status(&won).await.unwrap();
        assert_eq!(
            serde_json::to_value(&status).unwrap(),
            serde_json::to_value(&won_status).unwrap()
        );
        assert_eq!(lines_of(&dir, &lost, "end"), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_file_that_no_longer_replays_ends_the_episode_aborted() {
        let dir = folder("tampered");
        let id = {
            let before = hub(&dir, mcpgym_hilo::new());
            let id = start(&before).await;
            before.step(&id, "guess", number(50)).await.unwrap();
            id
        };
        let path = dir.join(format!("{id}.jsonl"));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"number\":50", "\"number\":51")).unwrap();
        let after = hub(&dir, mcpgym_hilo::new());
        assert_eq!(after.resume().await.unwrap().aborted, 1);
        let status = after.status(&id).await.unwrap();
        let reason = status.abort_reason.unwrap();
        assert!(
            reason.starts_with("the server restarted and could not rebuild this episode: turn 1"),
            "{reason}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
