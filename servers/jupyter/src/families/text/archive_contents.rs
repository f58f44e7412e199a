//! `archive-contents` (held out): a `.tar.gz` or `.zip` holding CSV files in nested folders
//! (with their columns in varying order) among other files; a sum or mean of one column over
//! every CSV inside, or of one region's rows.
//!
//! The setup packs the files with fixed dates, owners and modes, so the archive's bytes are the
//! same on every run; the unpacked files are removed.

use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

use super::common::{filler, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "archive-contents",
    kind: TaskKind::Files,
    split: FamilySplit::TestOnly,
    levelled: false,
    about: "file work: totals over the CSV files inside a tar.gz or zip archive",
    generate,
};

const TOPS: &[&str] = &["export", "records", "dump", "sales_data", "ledger"];
const FOLDERS: &[&str] = &[
    "north", "south", "east", "west", "q1", "q2", "q3", "q4", "misc",
];
const STEMS: &[&str] = &[
    "orders", "payments", "invoices", "refunds", "sales", "batch", "items",
];
const STAGE: &str = "_stage";

/// Packs `_stage/` into the archive (sorted paths; fixed dates, owners, modes; gzip without a
/// name or time), then removes it.
const PACK: &str = r#"import gzip
import io
import shutil
import tarfile
import zipfile

_paths = []
for _here, _dirs, _names in os.walk("_stage"):
    _dirs.sort()
    for _name in sorted(_names):
        _full = os.path.join(_here, _name)
        _paths.append((os.path.relpath(_full, "_stage"), _full))
_paths.sort()
if ARCHIVE.endswith(".zip"):
    with zipfile.ZipFile(ARCHIVE, "w", zipfile.ZIP_DEFLATED) as _zip:
        for _arc, _full in _paths:
            _info = zipfile.ZipInfo(_arc, date_time=(2024, 1, 2, 3, 4, 6))
            _info.compress_type = zipfile.ZIP_DEFLATED
            _info.external_attr = 0o644 << 16
            with open(_full, "rb") as _f:
                _zip.writestr(_info, _f.read())
else:
    _buffer = io.BytesIO()
    with tarfile.open(fileobj=_buffer, mode="w", format=tarfile.USTAR_FORMAT) as _tar:
        for _arc, _full in _paths:
            with open(_full, "rb") as _f:
                _data = _f.read()
            _info = tarfile.TarInfo(_arc)
            _info.size = len(_data)
            _info.mtime = 1704164646
            _info.mode = 0o644
            _info.uid = _info.gid = 0
            _info.uname = _info.gname = "user"
            _tar.addfile(_info, io.BytesIO(_data))
    with open(ARCHIVE, "wb") as _raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=_raw, mtime=0) as _gz:
            _gz.write(_buffer.getvalue())
shutil.rmtree("_stage")
"#;

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let archive = *g.pick(&[
        "data.tar.gz",
        "bundle.zip",
        "export.tgz",
        "records.zip",
        "backup.tar.gz",
    ]);
    let top = *g.pick(TOPS);
    let regions = g.subset(&["Nord", "Sud", "Centro", "Isole", "Est", "Ovest"], 2, 4);
    let folders = g.subset(FOLDERS, 2, 5);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    // (region, amount) of every CSV row.
    let mut rows_seen: Vec<(&str, f64)> = Vec::new();
    for i in 0..g.int(3, 8) {
        let mut folder = format!("{top}/{}", g.pick(&folders));
        if g.chance(0.4) {
            folder = format!("{folder}/{}", g.pick(&folders));
        }
        let path = format!("{folder}/{}_{}.csv", g.pick(STEMS), i + 1);
        // Columns in a per-file order: the amount is not always in the same place.
        let mut columns = vec!["id", "date", "region", "amount"];
        if g.chance(0.5) {
            columns.push("note");
        }
        g.shuffle(&mut columns);
        let mut table = Vec::new();
        for _ in 0..g.int(5, 40) {
            let region = *g.pick(&regions);
            let amount = g.money(-50.0, 900.0, 2);
            let amount = if amount < 0.0 && g.chance(0.7) {
                -amount
            } else {
                amount
            };
            rows_seen.push((region, amount));
            let row: Vec<String> = columns
                .iter()
                .map(|c| match *c {
                    "id" => g.int(10_000, 99_999).to_string(),
                    "date" => crate::families::date_of(g.int(0, 6 * 365)),
                    "region" => region.to_owned(),
                    "amount" => format!("{amount:.2}"),
                    _ => format!("{} {}", g.word(), g.word()),
                })
                .collect();
            table.push(row);
        }
        files.push((format!("{STAGE}/{path}"), csv_bytes(&columns, &table)));
    }
    // Files that are not CSV: their numbers do not count.
    files.push((
        format!("{STAGE}/{top}/README.txt"),
        format!(
            "Exported files. Amounts in euros. Batch size {} rows.\n{}\n",
            g.int(10, 99),
            filler(g, 200)
        )
        .into_bytes(),
    ));
    if g.chance(0.6) {
        let folder = g.pick(&folders);
        files.push((
            format!("{STAGE}/{top}/{folder}/totals.json"),
            format!(
                "{{\"amount\": {:.2}, \"currency\": \"EUR\"}}\n",
                g.money(100.0, 9000.0, 2)
            )
            .into_bytes(),
        ));
    }
    let kind = if archive.ends_with(".zip") {
        "zip archive"
    } else {
        "gzip-compressed tar archive"
    };
    let intro = format!(
        "The file {archive} in your home directory is a {kind}. Inside, in nested folders, are \
         CSV files (names ending in .csv) and a few other files. Every CSV file has a header \
         row with the columns id, date, region and amount (and sometimes note), in an order \
         that differs between files."
    );
    let (question, value) = match g.index(3) {
        0 => (
            "What is the sum of the amount column over every row of every CSV file in the \
             archive? Give the number rounded to 2 decimal places."
                .to_owned(),
            rows_seen.iter().map(|r| r.1).sum::<f64>(),
        ),
        1 => {
            let region = *g.pick(&regions);
            (
                format!(
                    "What is the sum of the amount column over the rows whose region is \
                     {region}, across every CSV file in the archive? Give the number rounded \
                     to 2 decimal places."
                ),
                rows_seen
                    .iter()
                    .filter(|r| r.0 == region)
                    .map(|r| r.1)
                    .sum::<f64>(),
            )
        }
        _ => (
            "What is the mean of the amount column over every row of every CSV file in the \
             archive? Give the number rounded to 2 decimal places."
                .to_owned(),
            rows_seen.iter().map(|r| r.1).sum::<f64>() / rows_seen.len() as f64,
        ),
    };
    let mut instance = Instance::new(
        format!("{intro} {question}"),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .secret(format!("{value:.2}"));
    for (path, bytes) in files {
        instance = instance.file(path, bytes);
    }
    instance.setup(format!("ARCHIVE = {archive:?}\n{PACK}"))
}
