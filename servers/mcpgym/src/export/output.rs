//! Where an export writes: standard output, or a file that appears under its name only once
//! it is complete (an interrupted export leaves `FILE.partial`, never a short `FILE`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// An export's destination.
pub enum Output {
    /// Standard output.
    Stdout(BufWriter<std::io::Stdout>),
    /// `partial`, renamed to `path` by [`Output::finish`].
    File {
        /// The file being written.
        writer: BufWriter<File>,
        /// Its name while written.
        partial: PathBuf,
        /// Its name once complete.
        path: PathBuf,
    },
}

impl Output {
    /// `-` for standard output (refused for a `binary` format), else the file `path`.
    pub fn create(path: &Path, binary: bool) -> anyhow::Result<Self> {
        if path.as_os_str() == "-" {
            anyhow::ensure!(
                !binary,
                "parquet is a binary format: give a file with --output"
            );
            return Ok(Output::Stdout(BufWriter::new(std::io::stdout())));
        }
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = File::create(&partial)
            .with_context(|| format!("cannot create {}", partial.display()))?;
        Ok(Output::File {
            writer: BufWriter::new(file),
            partial,
            path: path.to_owned(),
        })
    }

    /// Flushes, and gives the file its name.
    pub fn finish(self) -> anyhow::Result<()> {
        match self {
            Output::Stdout(mut writer) => Ok(writer.flush()?),
            Output::File {
                writer,
                partial,
                path,
            } => {
                let file = writer
                    .into_inner()
                    .map_err(|error| error.into_error())
                    .with_context(|| format!("cannot write {}", partial.display()))?;
                file.sync_all()?;
                std::fs::rename(&partial, &path).with_context(|| {
                    format!("cannot rename {} to {}", partial.display(), path.display())
                })
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(writer) => writer.write(buf),
            Output::File { writer, .. } => writer.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(writer) => writer.flush(),
            Output::File { writer, .. } => writer.flush(),
        }
    }
}
