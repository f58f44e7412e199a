//! The trajectory writer: one background thread appends every episode's lines to
//! `DIR/<episode>.jsonl` and writes its images to `DIR/<episode>/`.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use base64::Engine;

use super::{ImagePolicy, ObservationImage, TrajectoryEnd, TrajectoryHeader, TrajectoryRecord};

enum SinkMessage {
    Line {
        episode: Arc<str>,
        line: Line,
    },
    Images {
        episode: Arc<str>,
        images: Vec<ObservationImage>,
    },
    Close {
        episode: Arc<str>,
    },
}

/// A line waiting to be serialized by the writer thread.
enum Line {
    Header(Box<TrajectoryHeader>),
    Step(Arc<TrajectoryRecord>),
    End(Box<TrajectoryEnd>),
}

impl Line {
    fn to_json(&self) -> String {
        match self {
            Line::Header(header) => serde_json::to_string(header),
            Line::Step(record) => serde_json::to_string(record),
            Line::End(end) => serde_json::to_string(end),
        }
        .unwrap_or_default()
    }
}

/// Appends trajectory lines and images to per-episode files from a background thread.
#[derive(Debug, Clone)]
pub struct TrajectorySink {
    dir: PathBuf,
    images: ImagePolicy,
    sender: mpsc::Sender<SinkMessage>,
}

impl std::fmt::Debug for SinkMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SinkMessage")
    }
}

/// Files kept open at once; past this the writer closes them all and reopens on demand.
const MAX_OPEN_FILES: usize = 256;

impl TrajectorySink {
    /// Creates the directory if needed and starts the writer thread.
    pub fn start(dir: impl Into<PathBuf>, images: ImagePolicy) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        let (sender, receiver) = mpsc::channel::<SinkMessage>();
        let thread_dir = dir.clone();
        std::thread::Builder::new()
            .name("mcpgym-trajectory".into())
            .spawn(move || write_loop(&thread_dir, receiver))?;
        Ok(Self {
            dir,
            images,
            sender,
        })
    }

    /// The directory files are written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Which images are written.
    pub fn image_policy(&self) -> ImagePolicy {
        self.images
    }

    /// The file an episode's trajectory is written to.
    pub fn path_for(&self, episode: &str) -> PathBuf {
        self.dir.join(format!("{episode}.jsonl"))
    }

    /// Queues an episode's first line.
    pub fn header(&self, header: TrajectoryHeader) {
        let episode: Arc<str> = header.episode.as_str().into();
        self.send(episode, Line::Header(Box::new(header)));
    }

    /// Queues one step record for its episode's file; the writer thread serializes it.
    pub fn append(&self, record: Arc<TrajectoryRecord>) {
        self.send(record.episode.clone(), Line::Step(record));
    }

    /// Queues a step's images, to be decoded and written by the writer thread.
    pub fn images(&self, episode: &Arc<str>, images: Vec<ObservationImage>) {
        let _ = self.sender.send(SinkMessage::Images {
            episode: episode.clone(),
            images,
        });
    }

    /// Queues an episode's last line.
    pub fn end(&self, episode: &Arc<str>, end: TrajectoryEnd) {
        self.send(episode.clone(), Line::End(Box::new(end)));
    }

    /// Flushes and closes an episode's file.
    pub fn close(&self, episode: &Arc<str>) {
        let _ = self.sender.send(SinkMessage::Close {
            episode: episode.clone(),
        });
    }

    fn send(&self, episode: Arc<str>, line: Line) {
        let _ = self.sender.send(SinkMessage::Line { episode, line });
    }
}

fn write_loop(dir: &Path, receiver: mpsc::Receiver<SinkMessage>) {
    let mut open: HashMap<Arc<str>, BufWriter<File>> = HashMap::new();
    while let Ok(first) = receiver.recv() {
        let mut next = Some(first);
        // Drain everything queued, then flush once.
        while let Some(message) = next.take() {
            match message {
                SinkMessage::Line { episode, line } => {
                    write_line(dir, &mut open, episode, &line.to_json());
                }
                SinkMessage::Images { episode, images } => write_images(dir, &episode, &images),
                SinkMessage::Close { episode } => {
                    if let Some(mut file) = open.remove(&episode) {
                        let _ = file.flush();
                    }
                }
            }
            next = receiver.try_recv().ok();
        }
        for file in open.values_mut() {
            let _ = file.flush();
        }
    }
}

fn write_line(
    dir: &Path,
    open: &mut HashMap<Arc<str>, BufWriter<File>>,
    episode: Arc<str>,
    line: &str,
) {
    if !open.contains_key(&episode) && open.len() >= MAX_OPEN_FILES {
        for (_, mut file) in open.drain() {
            let _ = file.flush();
        }
    }
    let writer = match open.entry(episode) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => {
            let path = dir.join(format!("{}.jsonl", e.key()));
            match OpenOptions::new().create(true).append(true).open(&path) {
                Ok(file) => e.insert(BufWriter::new(file)),
                Err(error) => {
                    tracing::error!(path = %path.display(), %error, "cannot open trajectory file");
                    return;
                }
            }
        }
    };
    if let Err(error) = writer
        .write_all(line.as_bytes())
        .and_then(|()| writer.write_all(b"\n"))
    {
        tracing::error!(%error, "cannot write trajectory record");
    }
}

fn write_images(dir: &Path, episode: &str, images: &[ObservationImage]) {
    let folder = dir.join(episode);
    if let Err(error) = std::fs::create_dir_all(&folder) {
        tracing::error!(path = %folder.display(), %error, "cannot create the image folder");
        return;
    }
    for image in images {
        let path = folder.join(&image.name);
        let written = base64::engine::general_purpose::STANDARD
            .decode(image.base64.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|bytes| std::fs::write(&path, bytes).map_err(|e| e.to_string()));
        if let Err(error) = written {
            tracing::error!(path = %path.display(), %error, "cannot write a trajectory image");
        }
    }
}
