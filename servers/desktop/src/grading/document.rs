//! Office documents read as graders: text, formatting, slides, formulas and charts, from the
//! saved files themselves.
//!
//! Formats, told apart by extension: OpenDocument packages (`.odt`, `.ods`, `.odp`: a zip
//! whose `content.xml` holds the body) and their flat single-XML forms (`.fodt`, `.fods`,
//! `.fodp`); Office Open XML (`.docx`, `.xlsx`, `.pptx`); `.pdf` through `pdftotext`; and
//! plain `.txt`.
//!
//! The file is hostile (the agent wrote it): it is read once through [`super::home`]'s checks
//! into memory, at most [`MAX_DOCUMENT_BYTES`]; zip members larger than [`MAX_MEMBER_BYTES`]
//! once inflated are refused whatever their header claims (a zip bomb stops at the cap), XML
//! nesting deeper than [`MAX_XML_DEPTH`] or with more than [`MAX_XML_NODES`] nodes is refused,
//! and `pdftotext` reads the bytes from a pipe, with a clean environment and a timeout.

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use quick_xml::events::Event;

use super::excerpt;
use super::home::read_bytes;

/// The largest document file a check reads.
const MAX_DOCUMENT_BYTES: u64 = 32 * 1024 * 1024;
/// The most bytes one zip member may inflate to.
const MAX_MEMBER_BYTES: u64 = 64 * 1024 * 1024;
/// The deepest XML nesting read.
const MAX_XML_DEPTH: usize = 256;
/// The most XML nodes (elements and texts) one part may hold.
const MAX_XML_NODES: usize = 2_000_000;
/// How long `pdftotext` may take.
const PDFTOTEXT_TIMEOUT: Duration = Duration::from_secs(20);

/// Formatting a [`super::Check::DocumentStyled`] asks for; `None` is not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Style {
    pub bold: Option<bool>,
    pub italic: Option<bool>,
    pub underline: Option<bool>,
}

/// The document formats read, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// A zipped OpenDocument file.
    Odf,
    /// A flat (single XML) OpenDocument file.
    FlatOdf,
    Docx,
    Xlsx,
    Pptx,
    Pdf,
    Txt,
}

fn format_of(path: &str) -> Result<Format, String> {
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    Ok(match ext.as_str() {
        "odt" | "ods" | "odp" => Format::Odf,
        "fodt" | "fods" | "fodp" => Format::FlatOdf,
        "docx" => Format::Docx,
        "xlsx" => Format::Xlsx,
        "pptx" => Format::Pptx,
        "pdf" => Format::Pdf,
        "txt" | "csv" => Format::Txt,
        _ => return Err(format!("{path}: this kind of document is not read")),
    })
}

// ---------------------------------------------------------------------------------------
// XML as a small tree.

/// An XML element, names without their namespace prefix (`text:p` is `p`): the producers
/// of these formats bind the usual prefixes, but nothing obliges them to.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
}

#[derive(Debug)]
enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// The first descendant (or self) named `name`, depth first.
    fn find(&self, name: &str) -> Option<&Element> {
        if self.name == name {
            return Some(self);
        }
        self.elements().find_map(|e| e.find(name))
    }

    /// Every descendant (or self) named `name`, not looking inside matches.
    fn find_all<'a>(&'a self, name: &str, out: &mut Vec<&'a Element>) {
        if self.name == name {
            out.push(self);
            return;
        }
        for e in self.elements() {
            e.find_all(name, out);
        }
    }
}

fn local(name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    match name.rsplit_once(':') {
        Some((_, local)) => local.to_owned(),
        None => name.into_owned(),
    }
}

fn entity(name: &str) -> Option<char> {
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => return None,
    })
}

/// Parses a whole XML part into its root element.
fn parse_xml(bytes: &[u8], part: &str) -> Result<Element, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| format!("{part} is not UTF-8 XML"))?;
    let bad = |e: &dyn std::fmt::Display| format!("{part} is not well-formed XML: {e}");
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Element> = vec![Element::default()];
    let mut nodes = 0usize;
    let open = |e: &quick_xml::events::BytesStart<'_>| -> Result<Element, String> {
        let mut attrs = Vec::new();
        for attr in e.attributes() {
            let attr = attr.map_err(|e| bad(&e))?;
            let value = attr
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| bad(&e))?;
            attrs.push((local(attr.key.as_ref()), value.into_owned()));
        }
        Ok(Element {
            name: local(e.name().as_ref()),
            attrs,
            children: Vec::new(),
        })
    };
    loop {
        let event = reader.read_event().map_err(|e| bad(&e))?;
        nodes += 1;
        if nodes > MAX_XML_NODES {
            return Err(format!(
                "{part} has more than {MAX_XML_NODES} XML nodes; refused"
            ));
        }
        let top = stack.last_mut().expect("the stack keeps its root");
        match event {
            Event::Start(e) => {
                if stack.len() > MAX_XML_DEPTH {
                    return Err(format!(
                        "{part} nests XML deeper than {MAX_XML_DEPTH}; refused"
                    ));
                }
                stack.push(open(&e)?);
            }
            Event::Empty(e) => top.children.push(Node::Element(open(&e)?)),
            Event::End(_) => {
                let done = stack.pop().expect("the stack keeps its root");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(Node::Element(done)),
                    None => return Err(bad(&"an end tag without a start")),
                }
            }
            Event::Text(t) => {
                let t = t.xml10_content().map_err(|e| bad(&e))?;
                top.children.push(Node::Text(t.into_owned()));
            }
            Event::CData(t) => {
                let t = t.decode().map_err(|e| bad(&e))?;
                top.children.push(Node::Text(t.into_owned()));
            }
            Event::GeneralRef(r) => {
                let c = match r.resolve_char_ref().map_err(|e| bad(&e))? {
                    Some(c) => Some(c),
                    None => entity(&r.decode().map_err(|e| bad(&e))?),
                };
                if let Some(c) = c {
                    top.children.push(Node::Text(c.to_string()));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if stack.len() != 1 {
        return Err(bad(&"it ends inside an element"));
    }
    let root = stack.pop().expect("one left");
    root.children
        .into_iter()
        .find_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
        .ok_or_else(|| format!("{part} has no XML element"))
}

// ---------------------------------------------------------------------------------------
// Packages.

/// A zip package held in memory.
struct Package {
    archive: zip::ZipArchive<Cursor<Vec<u8>>>,
    path: String,
}

impl Package {
    fn open(bytes: Vec<u8>, path: &str) -> Result<Self, String> {
        let archive = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| format!("{path} is not a readable zip package: {e}"))?;
        Ok(Self {
            archive,
            path: path.to_owned(),
        })
    }

    fn names(&self) -> Vec<String> {
        self.archive.file_names().map(str::to_owned).collect()
    }

    /// A member's bytes, `None` when absent; inflating stops past [`MAX_MEMBER_BYTES`].
    fn member(&mut self, name: &str) -> Result<Option<Vec<u8>>, String> {
        let path = &self.path;
        let mut file = match self.archive.by_name(name) {
            Ok(file) => file,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(format!("{path}: cannot read {name}: {e}")),
        };
        if file.size() > MAX_MEMBER_BYTES {
            return Err(format!(
                "{path}: {name} inflates to more than {MAX_MEMBER_BYTES} bytes; refused"
            ));
        }
        let mut bytes = Vec::new();
        (&mut file)
            .take(MAX_MEMBER_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{path}: cannot inflate {name}: {e}"))?;
        if bytes.len() as u64 > MAX_MEMBER_BYTES {
            return Err(format!(
                "{path}: {name} inflates to more than {MAX_MEMBER_BYTES} bytes; refused"
            ));
        }
        Ok(Some(bytes))
    }

    fn xml(&mut self, name: &str) -> Result<Element, String> {
        let bytes = self
            .member(name)?
            .ok_or_else(|| format!("{}: the package has no {name}", self.path))?;
        parse_xml(&bytes, &format!("{}: {name}", self.path))
    }

    fn xml_if_any(&mut self, name: &str) -> Result<Option<Element>, String> {
        match self.member(name)? {
            Some(bytes) => parse_xml(&bytes, &format!("{}: {name}", self.path)).map(Some),
            None => Ok(None),
        }
    }
}

/// Reads the document at `rel` inside home and runs `work` on its bytes off the async
/// threads.
async fn with_document<T: Send + 'static>(
    home: &Path,
    rel: &str,
    work: impl FnOnce(Vec<u8>, Format, String) -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let format = format_of(rel)?;
    let bytes = read_bytes(home, rel, MAX_DOCUMENT_BYTES).await?;
    let rel = rel.to_owned();
    tokio::task::spawn_blocking(move || work(bytes, format, rel))
        .await
        .map_err(|e| format!("reading the document failed: {e}"))?
}

/// The OpenDocument root that holds the body: `content.xml` of a package, or the flat file.
fn odf_root(bytes: Vec<u8>, format: Format, rel: &str) -> Result<Element, String> {
    match format {
        Format::Odf => Package::open(bytes, rel)?.xml("content.xml"),
        Format::FlatOdf => parse_xml(&bytes, rel),
        _ => Err(format!("{rel} is not an OpenDocument file")),
    }
}

// ---------------------------------------------------------------------------------------
// Text.

/// Elements whose text is not the document's: deleted text kept by change tracking,
/// comments, speaker notes, and the declarations and styles around the body.
const SKIPPED: &[&str] = &[
    "tracked-changes",
    "annotation",
    "notes",
    "delText",
    "instrText",
    "styles",
    "automatic-styles",
    "master-styles",
    "font-face-decls",
    "settings",
    "meta",
    "scripts",
    "pPr",
    "rPr",
    "sectPr",
];

/// Whether text directly inside an element named `name` is content: ODF keeps text in
/// paragraphs and their spans, OOXML in `w:t`/`a:t` only (text elsewhere is the indentation
/// of a pretty-printed file).
fn holds_text(name: &str, ooxml: bool) -> bool {
    if ooxml {
        name == "t"
    } else {
        matches!(name, "p" | "h" | "span" | "a" | "meta" | "ruby-base")
    }
}

/// Appends an element's text: paragraphs end in a newline, ODF's `text:s`, `text:tab` and
/// `text:line-break` and OOXML's `w:tab`, `w:br` become whitespace.
fn push_text(e: &Element, ooxml: bool, out: &mut String) {
    if SKIPPED.contains(&e.name.as_str()) {
        return;
    }
    match e.name.as_str() {
        "s" if !ooxml => {
            let count = e.attr("c").and_then(|c| c.parse().ok()).unwrap_or(1usize);
            out.extend(std::iter::repeat_n(' ', count.min(1000)));
            return;
        }
        "tab" if e.children.is_empty() => {
            out.push('\t');
            return;
        }
        "line-break" | "br" | "cr" => {
            out.push('\n');
            return;
        }
        _ => {}
    }
    let own = holds_text(&e.name, ooxml);
    for child in &e.children {
        match child {
            Node::Text(t) if own => out.push_str(t),
            Node::Text(_) => {}
            Node::Element(c) => push_text(c, ooxml, out),
        }
    }
    if matches!(e.name.as_str(), "p" | "h") {
        out.push('\n');
    }
}

/// The text directly inside an element.
fn raw_text(e: &Element) -> String {
    e.children
        .iter()
        .filter_map(|n| match n {
            Node::Text(t) => Some(t.as_str()),
            Node::Element(_) => None,
        })
        .collect()
}

fn element_text(e: &Element, ooxml: bool) -> String {
    let mut out = String::new();
    push_text(e, ooxml, &mut out);
    out
}

/// The document's plain text.
pub(super) async fn text(home: &Path, path: &str) -> Result<String, String> {
    if format_of(path)? == Format::Pdf {
        let bytes = read_bytes(home, path, MAX_DOCUMENT_BYTES).await?;
        return pdf_text(bytes, path).await;
    }
    with_document(home, path, |bytes, format, rel| match format {
        Format::Odf | Format::FlatOdf => {
            let root = odf_root(bytes, format, &rel)?;
            let body = root
                .find("body")
                .ok_or_else(|| format!("{rel} has no document body"))?;
            Ok(element_text(body, false))
        }
        Format::Docx => {
            let root = Package::open(bytes, &rel)?.xml("word/document.xml")?;
            Ok(element_text(&root, true))
        }
        Format::Pptx => Ok(pptx_slides(bytes, &rel)?.join("\n")),
        Format::Xlsx => Err(format!("{rel}: the text of a workbook is not read")),
        Format::Txt => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Format::Pdf => unreachable!("read above"),
    })
    .await
}

/// A PDF's text by `pdftotext`, which reads the bytes from a pipe.
async fn pdf_text(bytes: Vec<u8>, rel: &str) -> Result<String, String> {
    use tokio::io::AsyncWriteExt as _;
    let mut child = tokio::process::Command::new("pdftotext")
        .args(["-enc", "UTF-8", "-", "-"])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run pdftotext: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let run = async move {
        // Fed from a task so that a full output pipe cannot stall the writer.
        let feed = tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
        });
        let out = child.wait_with_output().await;
        let _ = feed.await;
        out
    };
    let out = tokio::time::timeout(PDFTOTEXT_TIMEOUT, run)
        .await
        .map_err(|_| format!("pdftotext took longer than {PDFTOTEXT_TIMEOUT:?} on {rel}"))?
        .map_err(|e| format!("pdftotext failed: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "pdftotext could not read {rel}: {}",
            excerpt(String::from_utf8_lossy(&out.stderr).trim())
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

// ---------------------------------------------------------------------------------------
// Slides.

/// The slides of a `.pptx`, in the order of their part names (`slide1.xml`, `slide2.xml`,
/// …, as producers number them in showing order).
fn pptx_slides(bytes: Vec<u8>, rel: &str) -> Result<Vec<String>, String> {
    let mut package = Package::open(bytes, rel)?;
    let mut numbered: Vec<(u32, String)> = package
        .names()
        .into_iter()
        .filter_map(|name| {
            let n = name
                .strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()?;
            Some((n, name))
        })
        .collect();
    numbered.sort();
    numbered
        .into_iter()
        .map(|(_, name)| package.xml(&name).map(|root| element_text(&root, true)))
        .collect()
}

fn odf_slides(root: &Element, rel: &str) -> Result<Vec<String>, String> {
    let presentation = root
        .find("presentation")
        .ok_or_else(|| format!("{rel} is not a presentation"))?;
    let mut pages = Vec::new();
    presentation.find_all("page", &mut pages);
    Ok(pages.into_iter().map(|p| element_text(p, false)).collect())
}

/// Each slide's text, in order.
pub(super) async fn slides(home: &Path, path: &str) -> Result<Vec<String>, String> {
    with_document(home, path, |bytes, format, rel| match format {
        Format::Odf | Format::FlatOdf => odf_slides(&odf_root(bytes, format, &rel)?, &rel),
        Format::Pptx => pptx_slides(bytes, &rel),
        _ => Err(format!("{rel} is not a presentation (.odp, .fodp, .pptx)")),
    })
    .await
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a slide (or any) contains `text`.
pub(super) async fn slide_text(
    home: &Path,
    path: &str,
    slide: Option<u32>,
    text: &str,
) -> Result<String, String> {
    let all = slides(home, path).await?;
    let want = collapse(text);
    match slide {
        Some(n) => {
            let found = all
                .get((n as usize).wrapping_sub(1))
                .ok_or_else(|| format!("{path} has {} slides, no slide {n}", all.len()))?;
            if collapse(found).contains(&want) {
                Ok(format!("slide {n} contains the text"))
            } else {
                Err(format!("slide {n} reads {}", excerpt(&collapse(found))))
            }
        }
        None => match all.iter().position(|s| collapse(s).contains(&want)) {
            Some(i) => Ok(format!("slide {} contains the text", i + 1)),
            None => Err(format!(
                "no slide of {} contains it; they read {}",
                all.len(),
                excerpt(
                    &all.iter()
                        .map(|s| collapse(s))
                        .collect::<Vec<_>>()
                        .join(" | ")
                )
            )),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Formatting.

/// A run's formatting; `None` where nothing says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Fmt {
    bold: Option<bool>,
    italic: Option<bool>,
    underline: Option<bool>,
}

impl Fmt {
    /// `self` with `inner`'s settings on top.
    fn under(self, inner: Fmt) -> Fmt {
        Fmt {
            bold: inner.bold.or(self.bold),
            italic: inner.italic.or(self.italic),
            underline: inner.underline.or(self.underline),
        }
    }

    fn matches(self, want: Style) -> bool {
        let ok = |want: Option<bool>, have: Option<bool>| {
            want.is_none_or(|w| w == have.unwrap_or(false))
        };
        ok(want.bold, self.bold)
            && ok(want.italic, self.italic)
            && ok(want.underline, self.underline)
    }
}

/// ODF text properties: `fo:font-weight`, `fo:font-style`, `style:text-underline-style`.
fn odf_fmt(props: &Element) -> Fmt {
    let bold = props.attr("font-weight").map(|w| match w {
        "bold" | "bolder" => true,
        w => w.parse::<u32>().is_ok_and(|n| n >= 600),
    });
    let italic = props
        .attr("font-style")
        .map(|s| matches!(s, "italic" | "oblique"));
    let underline = props.attr("text-underline-style").map(|u| u != "none");
    Fmt {
        bold,
        italic,
        underline,
    }
}

/// ODF styles by name: their own formatting and their parent's name.
type OdfStyles = HashMap<String, (Fmt, Option<String>)>;

fn collect_odf_styles(root: &Element, styles: &mut OdfStyles) {
    let mut found = Vec::new();
    root.find_all("style", &mut found);
    for style in found {
        let Some(name) = style.attr("name") else {
            continue;
        };
        let fmt = style
            .elements()
            .find(|e| e.name == "text-properties")
            .map(odf_fmt)
            .unwrap_or_default();
        let parent = style.attr("parent-style-name").map(str::to_owned);
        styles.insert(name.to_owned(), (fmt, parent));
    }
}

fn resolve_odf_style(styles: &OdfStyles, name: &str) -> Fmt {
    let mut fmt = Fmt::default();
    let mut next = Some(name.to_owned());
    // Parents apply under children; a cycle stops after a few steps.
    for _ in 0..32 {
        let Some(name) = next else { break };
        let Some((own, parent)) = styles.get(&name) else {
            break;
        };
        fmt = own.under(fmt);
        next = parent.clone();
    }
    fmt
}

/// Every character of an ODF body with its effective formatting.
fn odf_chars(e: &Element, styles: &OdfStyles, outer: Fmt, out: &mut Vec<(char, Fmt)>) {
    if SKIPPED.contains(&e.name.as_str()) {
        return;
    }
    let fmt = match e.attr("style-name") {
        Some(name) if matches!(e.name.as_str(), "p" | "h" | "span" | "a") => {
            outer.under(resolve_odf_style(styles, name))
        }
        _ => outer,
    };
    match e.name.as_str() {
        "s" => {
            let count = e.attr("c").and_then(|c| c.parse().ok()).unwrap_or(1usize);
            out.extend(std::iter::repeat_n((' ', fmt), count.min(1000)));
            return;
        }
        "tab" => return out.push(('\t', fmt)),
        "line-break" => return out.push(('\n', fmt)),
        _ => {}
    }
    let own = holds_text(&e.name, false);
    for child in &e.children {
        match child {
            Node::Text(t) if own => out.extend(t.chars().map(|c| (c, fmt))),
            Node::Text(_) => {}
            Node::Element(c) => odf_chars(c, styles, fmt, out),
        }
    }
    if matches!(e.name.as_str(), "p" | "h") {
        out.push(('\n', Fmt::default()));
    }
}

/// An OOXML on/off property (`<w:b/>`, `<w:b w:val="0"/>`).
fn ooxml_toggle(e: &Element) -> bool {
    !matches!(e.attr("val"), Some("0" | "false" | "off" | "none"))
}

/// Every character of a `.docx` body with its run's direct formatting.
fn docx_chars(e: &Element, fmt: Fmt, out: &mut Vec<(char, Fmt)>) {
    if SKIPPED.contains(&e.name.as_str()) {
        return;
    }
    match e.name.as_str() {
        "r" => {
            let mut own = Fmt::default();
            if let Some(props) = e.elements().find(|c| c.name == "rPr") {
                for p in props.elements() {
                    match p.name.as_str() {
                        "b" => own.bold = Some(ooxml_toggle(p)),
                        "i" => own.italic = Some(ooxml_toggle(p)),
                        "u" => own.underline = Some(ooxml_toggle(p)),
                        _ => {}
                    }
                }
            }
            let fmt = fmt.under(own);
            for c in e.elements() {
                match c.name.as_str() {
                    "t" => out.extend(element_text(c, true).chars().map(|ch| (ch, fmt))),
                    "tab" => out.push(('\t', fmt)),
                    "br" | "cr" => out.push(('\n', fmt)),
                    _ => {}
                }
            }
        }
        "rPr" | "pPr" => {}
        _ => {
            for c in e.elements() {
                docx_chars(c, fmt, out);
            }
            if e.name == "p" {
                out.push(('\n', Fmt::default()));
            }
        }
    }
}

/// Whether every occurrence of `text` in `chars` has the formatting `want` (and there is
/// one). Whitespace runs compare as one space.
fn check_styled(
    chars: &[(char, Fmt)],
    text: &str,
    want: Style,
    path: &str,
) -> Result<String, String> {
    // Collapse whitespace, keeping for each kept character its formatting.
    let mut flat: Vec<(char, Fmt)> = Vec::with_capacity(chars.len());
    for &(c, f) in chars {
        if c.is_whitespace() {
            if flat.last().is_none_or(|(p, _)| *p != ' ') {
                flat.push((' ', f));
            }
        } else {
            flat.push((c, f));
        }
    }
    let want_chars: Vec<char> = collapse(text).chars().collect();
    if want_chars.is_empty() {
        return Err("the text to find is empty".to_owned());
    }
    let (mut found, mut styled) = (0, 0);
    for start in 0..flat.len() {
        let end = start + want_chars.len();
        if end > flat.len()
            || !flat[start..end]
                .iter()
                .map(|(c, _)| *c)
                .eq(want_chars.iter().copied())
        {
            continue;
        }
        found += 1;
        if flat[start..end].iter().all(|(_, f)| f.matches(want)) {
            styled += 1;
        }
    }
    match (found, styled) {
        (0, _) => Err(format!("{path} does not contain {text:?}")),
        (f, s) if f == s => Ok(format!("{text:?} is formatted as asked ({f} times)")),
        (f, s) => Err(format!(
            "{text:?} occurs {f} times in {path}, {s} of them formatted as asked"
        )),
    }
}

/// Whether every character of `text` has the formatting `want`.
pub(super) async fn styled(
    home: &Path,
    path: &str,
    text: &str,
    want: Style,
) -> Result<String, String> {
    let text = text.to_owned();
    with_document(home, path, move |bytes, format, rel| {
        let chars = match format {
            Format::Odf | Format::FlatOdf => {
                let mut styles = OdfStyles::new();
                let root = match format {
                    Format::Odf => {
                        let mut package = Package::open(bytes, &rel)?;
                        if let Some(named) = package.xml_if_any("styles.xml")? {
                            collect_odf_styles(&named, &mut styles);
                        }
                        package.xml("content.xml")?
                    }
                    _ => parse_xml(&bytes, &rel)?,
                };
                // Automatic styles (in content.xml) are read last: they win on a name clash.
                collect_odf_styles(&root, &mut styles);
                let body = root
                    .find("body")
                    .ok_or_else(|| format!("{rel} has no document body"))?;
                let mut chars = Vec::new();
                odf_chars(body, &styles, Fmt::default(), &mut chars);
                chars
            }
            Format::Docx => {
                let root = Package::open(bytes, &rel)?.xml("word/document.xml")?;
                let mut chars = Vec::new();
                docx_chars(&root, Fmt::default(), &mut chars);
                chars
            }
            _ => {
                return Err(format!(
                    "{rel}: formatting is read from .odt, .fodt and .docx"
                ));
            }
        };
        check_styled(&chars, &text, want, &rel)
    })
    .await
}

// ---------------------------------------------------------------------------------------
// Spreadsheets.

/// `B4` → (column 1, row 3), zero-based.
fn parse_cell(cell: &str) -> Option<(usize, usize)> {
    let cell = cell.trim().replace('$', "");
    let split = cell.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = cell.split_at(split);
    if letters.is_empty() || letters.len() > 3 || !letters.chars().all(|c| c.is_ascii_alphabetic())
    {
        return None;
    }
    let col = letters
        .chars()
        .fold(0usize, |acc, c| {
            acc * 26 + (c.to_ascii_uppercase() as usize - 'A' as usize + 1)
        })
        .checked_sub(1)?;
    let row = digits.parse::<usize>().ok()?.checked_sub(1)?;
    Some((col, row))
}

/// Repeats are capped: a sheet's real size is bounded by the spreadsheet application.
fn repeat(e: &Element, attr: &str) -> usize {
    e.attr(attr)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1usize)
        .clamp(1, 1 << 20)
}

/// The rows of an ODF table, including those inside header and group elements.
fn odf_rows<'a>(e: &'a Element, out: &mut Vec<&'a Element>) {
    for c in e.elements() {
        match c.name.as_str() {
            "table-row" => out.push(c),
            "table-header-rows" | "table-row-group" | "table-rows" => odf_rows(c, out),
            _ => {}
        }
    }
}

/// The formula of an ODF cell, `None` for a constant or empty cell.
fn odf_formula(
    root: &Element,
    sheet: Option<&str>,
    col: usize,
    row: usize,
) -> Result<Option<String>, String> {
    let body = root.find("spreadsheet").ok_or("not a spreadsheet")?;
    let tables: Vec<&Element> = body.elements().filter(|e| e.name == "table").collect();
    let table = match sheet {
        Some(name) => tables.into_iter().find(|t| t.attr("name") == Some(name)),
        None => tables.into_iter().next(),
    }
    .ok_or_else(|| format!("no sheet {}", sheet.unwrap_or("at all")))?;
    let mut rows = Vec::new();
    odf_rows(table, &mut rows);
    let mut r = 0;
    for row_el in rows {
        let span = repeat(row_el, "number-rows-repeated");
        if row < r + span {
            let mut c = 0;
            for cell in row_el.elements() {
                if !matches!(cell.name.as_str(), "table-cell" | "covered-table-cell") {
                    continue;
                }
                let span = repeat(cell, "number-columns-repeated");
                if col < c + span {
                    return Ok(cell.attr("formula").map(str::to_owned));
                }
                c += span;
            }
            return Ok(None);
        }
        r += span;
    }
    Ok(None)
}

/// The package path of an `.xlsx` sheet: the named one, or the first.
fn xlsx_sheet_part(package: &mut Package, sheet: Option<&str>) -> Result<String, String> {
    let workbook = package.xml("xl/workbook.xml")?;
    let mut sheets = Vec::new();
    workbook.find_all("sheet", &mut sheets);
    let chosen = match sheet {
        Some(name) => sheets.into_iter().find(|s| s.attr("name") == Some(name)),
        None => sheets.into_iter().next(),
    }
    .ok_or_else(|| format!("no sheet {}", sheet.unwrap_or("at all")))?;
    let id = chosen
        .attr("id")
        .ok_or("a sheet without a relationship id")?;
    let rels = package.xml("xl/_rels/workbook.xml.rels")?;
    let mut links = Vec::new();
    rels.find_all("Relationship", &mut links);
    let target = links
        .into_iter()
        .find(|l| l.attr("Id") == Some(id))
        .and_then(|l| l.attr("Target"))
        .ok_or_else(|| format!("the sheet's relationship {id} is missing"))?;
    Ok(match target.strip_prefix('/') {
        Some(absolute) => absolute.to_owned(),
        None => format!("xl/{target}"),
    })
}

fn xlsx_formula(sheet: &Element, cell: &str) -> Option<String> {
    let (col, row) = parse_cell(cell)?;
    let mut cells = Vec::new();
    sheet.find_all("c", &mut cells);
    let mut shared: HashMap<String, String> = HashMap::new();
    let mut hit = None;
    for c in cells {
        let formula = c.elements().find(|e| e.name == "f");
        if let Some(f) = formula {
            let text = raw_text(f);
            if let (Some("shared"), Some(si)) = (f.attr("t"), f.attr("si"))
                && !text.is_empty()
            {
                shared.insert(si.to_owned(), text.clone());
            }
        }
        if c.attr("r").and_then(parse_cell) == Some((col, row)) {
            hit = Some(formula.map(|f| (raw_text(f), f.attr("si").map(str::to_owned))));
        }
    }
    match hit {
        Some(Some((text, si))) if text.is_empty() => si.and_then(|si| shared.get(&si).cloned()),
        Some(Some((text, _))) => Some(text),
        _ => None,
    }
}

/// What a cell's formula must be.
#[derive(Debug, Clone, Copy)]
pub(super) enum Formula<'a> {
    /// Any formula whose text holds this, ignoring case (empty: any formula).
    Containing(&'a str),
    /// This formula and nothing more, as [`normalize_formula`] reads both.
    Exactly(&'a str),
}

/// A formula as written in any of the formats read here, reduced to one spelling: no `of:`
/// namespace, no leading `=`, no spaces, no `$` anchors, ODF's `[.B2:.B7]` references as
/// `B2:B7`, upper case. `of:=SUM([.B2:.B7])`, `=sum( $B$2:$B$7 )` and `SUM(B2:B7)` are one.
pub(super) fn normalize_formula(formula: &str) -> String {
    let text = formula.trim();
    let text = text.strip_prefix("of:").unwrap_or(text);
    let text = text.strip_prefix('=').unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut in_reference = false;
    let mut previous = None;
    for c in text.chars() {
        match c {
            '[' => in_reference = true,
            ']' => in_reference = false,
            // ODF writes a reference's sheet-less cell as `.B2`.
            '.' if in_reference && matches!(previous, None | Some('[' | ':')) => {}
            '$' => {}
            c if c.is_whitespace() => {}
            c => out.extend(c.to_uppercase()),
        }
        if !c.is_whitespace() {
            previous = Some(c);
        }
    }
    out
}

/// Whether a cell holds a formula as `wanted` says. A `.gnumeric` workbook is read through
/// its conversion to `.xlsx` by `ssconvert`, which keeps formulas.
pub(super) async fn spreadsheet_formula(
    home: &Path,
    path: &str,
    sheet: Option<&str>,
    cell: &str,
    wanted: Formula<'_>,
) -> Result<String, String> {
    let (col, row) = parse_cell(cell).ok_or_else(|| format!("bad cell {cell:?}"))?;
    let sheet = sheet.map(str::to_owned);
    let formula = if path.to_ascii_lowercase().ends_with(".gnumeric") {
        let bytes = super::spreadsheet::as_xlsx(home, path).await?;
        let (rel, cell) = (path.to_owned(), cell.to_owned());
        tokio::task::spawn_blocking(move || xlsx_cell_formula(bytes, &rel, sheet.as_deref(), &cell))
            .await
            .map_err(|e| format!("reading the workbook failed: {e}"))??
    } else {
        let cell = cell.to_owned();
        with_document(home, path, move |bytes, format, rel| match format {
            Format::Odf | Format::FlatOdf => {
                let root = odf_root(bytes, format, &rel)?;
                odf_formula(&root, sheet.as_deref(), col, row).map_err(|e| format!("{rel}: {e}"))
            }
            Format::Xlsx => xlsx_cell_formula(bytes, &rel, sheet.as_deref(), &cell),
            _ => Err(format!(
                "{rel}: formulas are read from .ods, .fods, .xlsx and .gnumeric"
            )),
        })
        .await?
    };
    let Some(found) = formula else {
        return Err(format!("{cell} of {path} holds no formula"));
    };
    match wanted {
        Formula::Containing(part) if found.to_lowercase().contains(&part.to_lowercase()) => {
            Ok(format!("{cell} holds the formula {found:?}"))
        }
        Formula::Containing(part) => Err(format!(
            "{cell} holds the formula {found:?}, without {part:?}"
        )),
        Formula::Exactly(expected) if normalize_formula(&found) == normalize_formula(expected) => {
            Ok(format!("{cell} holds the formula {found:?}"))
        }
        Formula::Exactly(expected) => Err(format!(
            "{cell} holds the formula {found:?}, not ={expected} (the named function over the named range, with nothing added)"
        )),
    }
}

/// The formula of `cell` in an `.xlsx` workbook's sheet.
fn xlsx_cell_formula(
    bytes: Vec<u8>,
    rel: &str,
    sheet: Option<&str>,
    cell: &str,
) -> Result<Option<String>, String> {
    let mut package = Package::open(bytes, rel)?;
    let part = xlsx_sheet_part(&mut package, sheet).map_err(|e| format!("{rel}: {e}"))?;
    let root = package.xml(&part)?;
    Ok(xlsx_formula(&root, cell))
}

/// The chart objects an ODF package's content refers to (`draw:object` links whose
/// manifest entry is a chart).
fn odf_package_has_chart(package: &mut Package) -> Result<bool, String> {
    let manifest = package.xml("META-INF/manifest.xml")?;
    let mut entries = Vec::new();
    manifest.find_all("file-entry", &mut entries);
    let charts: Vec<String> = entries
        .into_iter()
        .filter(|e| e.attr("media-type") == Some("application/vnd.oasis.opendocument.chart"))
        .filter_map(|e| e.attr("full-path"))
        .map(|p| p.trim_end_matches('/').to_owned())
        .collect();
    if charts.is_empty() {
        return Ok(false);
    }
    let content = package.xml("content.xml")?;
    let mut objects = Vec::new();
    content.find_all("object", &mut objects);
    Ok(objects.iter().any(|o| {
        o.attr("href").is_some_and(|href| {
            let href = href.trim_start_matches("./").trim_end_matches('/');
            charts.iter().any(|c| c == href)
        })
    }))
}

/// Whether the spreadsheet holds a chart.
pub(super) async fn spreadsheet_chart(home: &Path, path: &str) -> Result<String, String> {
    with_document(home, path, |bytes, format, rel| {
        let found = match format {
            Format::Odf => odf_package_has_chart(&mut Package::open(bytes, &rel)?)?,
            Format::FlatOdf => {
                // A flat file embeds its objects: a `draw:object` holding an `office:chart`.
                let root = parse_xml(&bytes, &rel)?;
                let mut objects = Vec::new();
                root.find_all("object", &mut objects);
                objects.iter().any(|o| o.find("chart").is_some())
            }
            Format::Xlsx => {
                let package = Package::open(bytes, &rel)?;
                package
                    .names()
                    .iter()
                    .any(|n| n.starts_with("xl/charts/chart") && n.ends_with(".xml"))
            }
            _ => return Err(format!("{rel}: charts are read from .ods, .fods and .xlsx")),
        };
        if found {
            Ok(format!("{rel} holds a chart"))
        } else {
            Err(format!("{rel} holds no chart"))
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A zip package of `(name, text)` members.
    fn package(members: &[(&str, &str)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, text) in members {
            zip.start_file(*name, options).unwrap();
            zip.write_all(text.as_bytes()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    struct Home(std::path::PathBuf);

    impl Home {
        fn new(tag: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("mcpgym-doc-test-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
        fn put(&self, name: &str, bytes: &[u8]) {
            std::fs::write(self.0.join(name), bytes).unwrap();
        }
    }

    impl Drop for Home {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const ODT_CONTENT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0">
<office:automatic-styles>
<style:style style:name="T1" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>
<style:style style:name="T2" style:family="text"><style:text-properties fo:font-style="italic" style:text-underline-style="solid"/></style:style>
<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Heading"/>
</office:automatic-styles>
<office:body><office:text>
<text:tracked-changes><text:changed-region><text:deletion><text:p>gone words</text:p></text:deletion></text:changed-region></text:tracked-changes>
<text:p text:style-name="P1">Plain <text:span text:style-name="T1">strong</text:span> and<text:s text:c="2"/><text:span text:style-name="T2">slanted</text:span> &amp; more.</text:p>
<text:p>Second <text:span text:style-name="T1">strong</text:span> one.</text:p>
</office:text></office:body></office:document-content>"#;

    const ODT_STYLES: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0">
<office:styles><style:style style:name="Heading" style:family="paragraph"><style:text-properties fo:font-weight="bold"/></style:style></office:styles>
</office:document-styles>"#;

    #[tokio::test]
    async fn odt_text_and_formatting() {
        let home = Home::new("odt");
        home.put(
            "a.odt",
            &package(&[("content.xml", ODT_CONTENT), ("styles.xml", ODT_STYLES)]),
        );
        let text = text(&home.0, "a.odt").await.unwrap();
        assert!(
            text.contains("Plain strong and  slanted & more.\n"),
            "{text:?}"
        );
        assert!(!text.contains("gone"), "{text:?}");
        let bold = Style {
            bold: Some(true),
            ..Style::default()
        };
        // The first paragraph's style is bold through its parent; the second's "strong" by
        // its span: every occurrence is bold.
        assert!(styled(&home.0, "a.odt", "strong", bold).await.is_ok());
        assert!(styled(&home.0, "a.odt", "Plain", bold).await.is_ok());
        assert!(styled(&home.0, "a.odt", "Second", bold).await.is_err());
        assert!(styled(&home.0, "a.odt", "absent", bold).await.is_err());
        let slanted = Style {
            italic: Some(true),
            underline: Some(true),
            bold: None,
        };
        assert!(styled(&home.0, "a.odt", "slanted", slanted).await.is_ok());
        assert!(
            styled(&home.0, "a.odt", "and slanted", slanted)
                .await
                .is_err()
        );
        let not_italic = Style {
            italic: Some(false),
            ..Style::default()
        };
        assert!(styled(&home.0, "a.odt", "Second", not_italic).await.is_ok());
    }

    #[tokio::test]
    async fn docx_text_and_formatting() {
        let home = Home::new("docx");
        let document = r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:r><w:t xml:space="preserve">Hello </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r><w:r><w:rPr><w:b w:val="0"/><w:u w:val="single"/></w:rPr><w:t xml:space="preserve"> under</w:t></w:r></w:p>
<w:p><w:r><w:delText>deleted</w:delText><w:t>Next</w:t></w:r></w:p></w:body></w:document>"#;
        home.put("a.docx", &package(&[("word/document.xml", document)]));
        let text = text(&home.0, "a.docx").await.unwrap();
        assert_eq!(text, "Hello bold under\nNext\n");
        let bold = Style {
            bold: Some(true),
            ..Style::default()
        };
        assert!(styled(&home.0, "a.docx", "bold", bold).await.is_ok());
        assert!(styled(&home.0, "a.docx", "under", bold).await.is_err());
        let under = Style {
            underline: Some(true),
            ..Style::default()
        };
        assert!(styled(&home.0, "a.docx", "under", under).await.is_ok());
    }

    #[tokio::test]
    async fn slides_of_odp_fodp_and_pptx() {
        let home = Home::new("slides");
        let odp = r#"<?xml version="1.0"?><office:document-content xmlns:office="o" xmlns:draw="d" xmlns:text="t" xmlns:presentation="p"><office:body><office:presentation>
<draw:page draw:name="a"><draw:frame><draw:text-box><text:p>First title</text:p></draw:text-box></draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>note</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>
<draw:page draw:name="b"><draw:frame><draw:text-box><text:p>Second   title</text:p><text:p>body</text:p></draw:text-box></draw:frame></draw:page>
</office:presentation></office:body></office:document-content>"#;
        home.put("a.odp", &package(&[("content.xml", odp)]));
        home.put(
            "a.fodp",
            odp.replace("office:document-content", "office:document")
                .as_bytes(),
        );
        for path in ["a.odp", "a.fodp"] {
            let all = slides(&home.0, path).await.unwrap();
            assert_eq!(all.len(), 2, "{path}");
            assert!(!all[0].contains("note"));
            assert!(
                slide_text(&home.0, path, Some(2), "Second title body")
                    .await
                    .is_ok()
            );
            assert!(slide_text(&home.0, path, Some(1), "Second").await.is_err());
            assert!(slide_text(&home.0, path, None, "Second").await.is_ok());
            assert!(slide_text(&home.0, path, Some(3), "x").await.is_err());
        }
        let slide = |t: &str| {
            format!(
                r#"<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>{t}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"#
            )
        };
        let (one, two, ten) = (slide("one"), slide("two"), slide("ten"));
        home.put(
            "a.pptx",
            &package(&[
                ("ppt/slides/slide10.xml", &ten),
                ("ppt/slides/slide2.xml", &two),
                ("ppt/slides/slide1.xml", &one),
                ("ppt/slides/_rels/slide1.xml.rels", "<x/>"),
            ]),
        );
        let all = slides(&home.0, "a.pptx").await.unwrap();
        assert_eq!(all, ["one\n", "two\n", "ten\n"]);
    }

    const FODS: &str = r#"<?xml version="1.0"?><office:document xmlns:office="o" xmlns:table="t" xmlns:text="x" xmlns:draw="d" xmlns:chart="c"><office:body><office:spreadsheet>
<table:table table:name="Data"><table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="3"/></table:table-row>
<table:table-row><table:table-cell table:number-columns-repeated="2"/><table:table-cell table:formula="of:=SUM([.A1:.A2])" office:value="3"><text:p>3</text:p></table:table-cell><table:table-cell office:value="4"/></table:table-row></table:table>
<table:table table:name="Other"><table:table-row><table:table-cell table:formula="of:=AVERAGE([.B1:.B3])"/></table:table-row></table:table>
</office:spreadsheet></office:body></office:document>"#;

    #[tokio::test]
    async fn formulas_of_ods_fods_and_xlsx() {
        let home = Home::new("formula");
        home.put("a.fods", FODS.as_bytes());
        home.put(
            "a.ods",
            &package(&[(
                "content.xml",
                &FODS.replace("office:document", "office:document-content"),
            )]),
        );
        for path in ["a.fods", "a.ods"] {
            assert!(
                spreadsheet_formula(&home.0, path, None, "C3", Formula::Containing("sum("))
                    .await
                    .is_ok()
            );
            assert!(
                spreadsheet_formula(&home.0, path, None, "C3", Formula::Containing(""))
                    .await
                    .is_ok()
            );
            assert!(
                spreadsheet_formula(&home.0, path, None, "C3", Formula::Containing("AVERAGE"))
                    .await
                    .is_err()
            );
            assert!(
                spreadsheet_formula(&home.0, path, None, "D3", Formula::Containing(""))
                    .await
                    .is_err()
            );
            assert!(
                spreadsheet_formula(&home.0, path, None, "B1", Formula::Containing(""))
                    .await
                    .is_err()
            );
            assert!(
                spreadsheet_formula(
                    &home.0,
                    path,
                    Some("Other"),
                    "A1",
                    Formula::Containing("average")
                )
                .await
                .is_ok()
            );
            assert!(
                spreadsheet_formula(&home.0, path, Some("None"), "A1", Formula::Containing(""))
                    .await
                    .is_err()
            );
        }
        let workbook = r#"<workbook xmlns="m" xmlns:r="r"><sheets><sheet name="First" sheetId="1" r:id="rId2"/><sheet name="Second" sheetId="2" r:id="rId3"/></sheets></workbook>"#;
        let rels = r#"<Relationships xmlns="x"><Relationship Id="rId2" Target="worksheets/sheet1.xml"/><Relationship Id="rId3" Target="/xl/worksheets/sheet2.xml"/></Relationships>"#;
        let sheet1 = r#"<worksheet xmlns="m"><sheetData><row r="1"><c r="A1"><v>1</v></c><c r="B1"><f t="shared" si="0" ref="B1:B2">A1*2</f><v>2</v></c></row><row r="2"><c r="B2"><f t="shared" si="0"/><v>2</v></c></row><row r="5"><c r="A5"><f>SUM(A1:A4)</f><v>1</v></c></row></sheetData></worksheet>"#;
        let sheet2 = r#"<worksheet xmlns="m"><sheetData><row r="1"><c r="C1"><f>MAX(A1:A2)</f></c></row></sheetData></worksheet>"#;
        home.put(
            "a.xlsx",
            &package(&[
                ("xl/workbook.xml", workbook),
                ("xl/_rels/workbook.xml.rels", rels),
                ("xl/worksheets/sheet1.xml", sheet1),
                ("xl/worksheets/sheet2.xml", sheet2),
            ]),
        );
        assert!(
            spreadsheet_formula(&home.0, "a.xlsx", None, "A5", Formula::Containing("SUM(A1"))
                .await
                .is_ok()
        );
        assert!(
            spreadsheet_formula(&home.0, "a.xlsx", None, "A1", Formula::Containing(""))
                .await
                .is_err()
        );
        assert!(
            spreadsheet_formula(&home.0, "a.xlsx", None, "B2", Formula::Containing("a1*2"))
                .await
                .is_ok()
        );
        assert!(
            spreadsheet_formula(
                &home.0,
                "a.xlsx",
                Some("Second"),
                "C1",
                Formula::Containing("max")
            )
            .await
            .is_ok()
        );
        assert!(spreadsheet_chart(&home.0, "a.xlsx").await.is_err());
        // Exactly the formula asked for, in either format's spelling, and nothing more.
        for (path, cell, formula) in [
            ("a.xlsx", "A5", "SUM(A1:A4)"),
            ("a.fods", "C3", "sum($A$1:A2)"),
        ] {
            assert!(
                spreadsheet_formula(&home.0, path, None, cell, Formula::Exactly(formula))
                    .await
                    .is_ok(),
                "{path}"
            );
            let error =
                spreadsheet_formula(&home.0, path, None, cell, Formula::Exactly("SUM(A1:A3)"))
                    .await
                    .unwrap_err();
            assert!(error.contains("nothing added"), "{error}");
        }
    }

    #[test]
    fn formulas_reduce_to_one_spelling_and_keep_every_term() {
        let one = normalize_formula("SUM(B2:B7)");
        for same in [
            "of:=SUM([.B2:.B7])",
            "=sum( $B$2 : $B$7 )",
            " =SUM(B$2:$B7)",
        ] {
            assert_eq!(normalize_formula(same), one, "{same}");
        }
        // The hand-worked total, a constant added, another range, another function.
        for hack in [
            "=SUM(0)+2995",
            "=SUM(B2:B7)+0",
            "=SUM(B2:B6)",
            "=SUM(B2:B7,1)",
            "=AVERAGE(B2:B7)",
            "=2995",
            "of:=SUM([.B2:.B7])*1",
            "=SUM(Sheet2.B2:B7)",
        ] {
            assert_ne!(normalize_formula(hack), one, "{hack}");
        }
    }

    #[tokio::test]
    async fn charts_of_ods_fods_and_xlsx() {
        let home = Home::new("chart");
        let manifest = r#"<manifest:manifest xmlns:manifest="m"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry manifest:full-path="Object 1/" manifest:media-type="application/vnd.oasis.opendocument.chart"/></manifest:manifest>"#;
        let content = r#"<office:document-content xmlns:office="o" xmlns:draw="d" xmlns:xlink="l"><office:body><office:spreadsheet><draw:frame><draw:object xlink:href="./Object 1"/></draw:frame></office:spreadsheet></office:body></office:document-content>"#;
        home.put(
            "c.ods",
            &package(&[
                ("META-INF/manifest.xml", manifest),
                ("content.xml", content),
            ]),
        );
        home.put(
            "n.ods",
            &package(&[
                ("META-INF/manifest.xml", "<manifest/>"),
                ("content.xml", content),
            ]),
        );
        assert!(spreadsheet_chart(&home.0, "c.ods").await.is_ok());
        assert!(spreadsheet_chart(&home.0, "n.ods").await.is_err());
        home.put("f.fods", FODS.as_bytes());
        assert!(spreadsheet_chart(&home.0, "f.fods").await.is_err());
        home.put(
            "g.fods",
            FODS.replace(
                "</office:spreadsheet>",
                "<draw:frame><draw:object><office:document><office:body><office:chart/></office:body></office:document></draw:object></draw:frame></office:spreadsheet>",
            )
            .as_bytes(),
        );
        assert!(spreadsheet_chart(&home.0, "g.fods").await.is_ok());
        home.put("c.xlsx", &package(&[("xl/charts/chart1.xml", "<c/>")]));
        assert!(spreadsheet_chart(&home.0, "c.xlsx").await.is_ok());
    }

    #[tokio::test]
    async fn hostile_documents_are_refused() {
        let home = Home::new("hostile");
        // A member that inflates past the cap (zeros compress about a thousandfold).
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(true);
        zip.start_file("content.xml", options).unwrap();
        let block = vec![b' '; 1 << 20];
        for _ in 0..(MAX_MEMBER_BYTES >> 20) + 1 {
            zip.write_all(&block).unwrap();
        }
        home.put("bomb.odt", &zip.finish().unwrap().into_inner());
        let err = text(&home.0, "bomb.odt").await.unwrap_err();
        assert!(err.contains("refused"), "{err}");
        let deep = "<a>".repeat(MAX_XML_DEPTH + 5) + &"</a>".repeat(MAX_XML_DEPTH + 5);
        home.put("deep.fodt", deep.as_bytes());
        let err = text(&home.0, "deep.fodt").await.unwrap_err();
        assert!(err.contains("deeper"), "{err}");
        home.put("junk.odt", b"not a zip");
        assert!(text(&home.0, "junk.odt").await.is_err());
        home.put("junk.fodt", b"<a><b></a>");
        assert!(text(&home.0, "junk.fodt").await.is_err());
        assert!(text(&home.0, "x.unknown").await.is_err());
        std::os::unix::fs::symlink("/etc/passwd", home.0.join("link.txt")).unwrap();
        assert!(text(&home.0, "link.txt").await.is_err());
    }

    #[test]
    fn whitespace_and_repeats_in_styled_text() {
        let b = Fmt {
            bold: Some(true),
            ..Fmt::default()
        };
        let chars: Vec<(char, Fmt)> = "a  big\tword"
            .chars()
            .map(|c| (c, if c == 'a' { Fmt::default() } else { b }))
            .collect();
        let want = Style {
            bold: Some(true),
            ..Style::default()
        };
        assert!(check_styled(&chars, "big word", want, "x").is_ok());
        assert!(check_styled(&chars, "a big", want, "x").is_err());
        assert_eq!(parse_cell("$B$4"), Some((1, 3)));
        assert_eq!(parse_cell("AA10"), Some((26, 9)));
        assert_eq!(parse_cell("10"), None);
    }
}
