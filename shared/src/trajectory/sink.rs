//! The trajectory writer: one background thread appends every episode's lines to
//! `DIR/<episode>.jsonl` and writes its images to `DIR/<episode>/`.
//!
//! The files are also the server's journal (see [`crate::hub::Hub::resume`]): while an
//! episode runs, a marker `DIR/.live/<episode>` (holding the server's pid) says its file has
//! no end yet, and each
//! episode that ends is appended to the index `DIR/.ended`, newest last. A restart reads the
//! markers to find the episodes it must resume or mark aborted, and the index's tail to know
//! which finished episodes to keep readable, without reading the whole folder.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use base64::Engine;

use super::{
    ImagePolicy, ObservationImage, TrajectoryEnd, TrajectoryHeader, TrajectoryPrompt,
    TrajectoryRecord,
};

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
    /// Answered once everything queued before it is written to the files.
    Synced(tokio::sync::oneshot::Sender<()>),
}

/// A line waiting to be serialized by the writer thread.
enum Line {
    Header(Box<TrajectoryHeader>),
    Step(Arc<TrajectoryRecord>),
    Prompt(TrajectoryPrompt),
    End(Box<TrajectoryEnd>),
}

impl Line {
    fn to_json(&self) -> String {
        match self {
            Line::Header(header) => serde_json::to_string(header),
            Line::Step(record) => serde_json::to_string(record),
            Line::Prompt(prompt) => serde_json::to_string(prompt),
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

/// The folder of markers of episodes whose file has no end yet.
pub const LIVE_DIR: &str = ".live";
/// The index of episodes that ended, one id per line, oldest first.
pub const ENDED_INDEX: &str = ".ended";

impl TrajectorySink {
    /// Creates the directory if needed and starts the writer thread.
    pub fn start(dir: impl Into<PathBuf>, images: ImagePolicy) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(dir.join(LIVE_DIR))?;
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

    /// Queues the line saying the episode's prompt was handed over before turn `turn + 1`
    /// (an environment may then leave it out of the first observation).
    pub fn prompt(&self, episode: &Arc<str>, prompt: TrajectoryPrompt) {
        self.send(episode.clone(), Line::Prompt(prompt));
    }

    /// Resolves once every line queued before it is in its file (written, not necessarily on
    /// disk: it survives the server being killed, not the machine losing power). A reply waits
    /// for it, so the journal never lags what a client was told.
    pub async fn synced(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.sender.send(SinkMessage::Synced(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// The ids of the episodes whose file has no end yet and whose server is gone: those a
    /// server that stopped without ending them left behind. Episodes of another server still
    /// running on the same folder (one per stdio client, say) are not listed.
    pub fn unfinished(&self) -> std::io::Result<Vec<String>> {
        let mut ids = Vec::new();
        let me = std::process::id();
        for entry in std::fs::read_dir(self.dir.join(LIVE_DIR))? {
            let entry = entry?;
            let Some(id) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let owner = std::fs::read_to_string(entry.path())
                .ok()
                .and_then(|pid| pid.trim().parse::<u32>().ok());
            // A pid that is this process's is from a previous life (a container's pid 1).
            let running =
                owner.is_some_and(|pid| pid != me && Path::new(&format!("/proc/{pid}")).exists());
            if !running {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// The ids of the last `count` episodes to end, oldest first (each once).
    pub fn last_ended(&self, count: usize) -> std::io::Result<Vec<String>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = match File::open(self.dir.join(ENDED_INDEX)) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        // Ids are far shorter than 192 bytes: the tail holds the last `count` lines.
        let tail = (count as u64).saturating_mul(192);
        let length = file.metadata()?.len();
        file.seek(SeekFrom::Start(length.saturating_sub(tail)))?;
        let mut text = String::new();
        file.take(tail).read_to_string(&mut text)?;
        let mut lines: Vec<&str> = text.lines().collect();
        if length > tail && !lines.is_empty() {
            lines.remove(0); // cut mid-line
        }
        let mut seen = std::collections::HashSet::new();
        let mut ids: Vec<String> = lines
            .iter()
            .rev()
            .filter(|id| !id.is_empty() && seen.insert(**id))
            .take(count)
            .map(|id| (*id).to_owned())
            .collect();
        ids.reverse();
        Ok(ids)
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
    let mut ended_index: Option<File> = None;
    let mut waiting = Vec::new();
    while let Ok(first) = receiver.recv() {
        let mut next = Some(first);
        // Drain everything queued, then flush once.
        while let Some(message) = next.take() {
            match message {
                SinkMessage::Line { episode, line } => {
                    let marker = dir.join(LIVE_DIR).join(&*episode);
                    let (is_header, is_end) = (
                        matches!(line, Line::Header(_)),
                        matches!(line, Line::End(_)),
                    );
                    write_line(dir, &mut open, episode.clone(), &line.to_json());
                    let pid = std::process::id().to_string();
                    if is_header && let Err(error) = std::fs::write(&marker, pid) {
                        tracing::error!(path = %marker.display(), %error, "cannot mark an episode live");
                    }
                    if is_end {
                        // The end is in the file before the marker goes.
                        if let Some(file) = open.get_mut(&episode) {
                            let _ = file.flush();
                        }
                        let _ = std::fs::remove_file(&marker);
                        append_ended(dir, &mut ended_index, &episode);
                    }
                }
                SinkMessage::Synced(done) => waiting.push(done),
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
        for done in waiting.drain(..) {
            let _ = done.send(());
        }
    }
}

fn append_ended(dir: &Path, index: &mut Option<File>, episode: &str) {
    if index.is_none() {
        match OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(ENDED_INDEX))
        {
            Ok(file) => *index = Some(file),
            Err(error) => {
                tracing::error!(%error, "cannot open the index of ended episodes");
                return;
            }
        }
    }
    if let Some(file) = index
        && let Err(error) = file.write_all(format!("{episode}\n").as_bytes())
    {
        tracing::error!(%error, "cannot append to the index of ended episodes");
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
