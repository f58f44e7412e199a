//! `archive-contents` (held out): a `.tar.gz` or `.zip` holding CSV files in nested folders
//! (with their columns in varying order) among other files; a sum or mean of one column over
//! every CSV inside, or of one region's rows.
//!
//! The setup packs the files with fixed dates, owners and modes, so the archive's bytes are the
//! same on every run; the unpacked files are removed.
//!
//! Levels: easy is three to six CSV files; medium more and longer ones, some of them inside an
//! archive of the other kind nested in the first, and amounts of a thousand or more written
//! with thousands separators; hard adds CSV files saved on Windows (byte order mark, `\r\n`),
//! rows with no amount, and a stale `.csv.bak` copy that does not count.

use mcpgym_env::generate::wording::{precision, question};

use crate::families::money::thousands;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

use super::common::{filler, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "archive-contents",
    kind: TaskKind::Files,
    split: FamilySplit::TestOnly,
    levelled: true,
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

/// Where the files of a nested archive are staged.
const INNER_STAGE: &str = "_inner";

/// Defines `_pack(stage, archive)`, which packs the folder `stage` into `archive` (sorted paths;
/// fixed dates, owners, modes; gzip without a name or time), then removes the folder.
const PACK: &str = r#"import gzip
import io
import shutil
import tarfile
import zipfile



def _pack(stage, archive):
    if os.path.dirname(archive):
        os.makedirs(os.path.dirname(archive), exist_ok=True)
    paths = []
    for here, dirs, names in os.walk(stage):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(here, name)
            paths.append((os.path.relpath(full, stage), full))
    paths.sort()
    if archive.endswith(".zip"):
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as packed:
            for arc, full in paths:
                info = zipfile.ZipInfo(arc, date_time=(2024, 1, 2, 3, 4, 6))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                with open(full, "rb") as f:
                    packed.writestr(info, f.read())
    else:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as packed:
            for arc, full in paths:
                with open(full, "rb") as f:
                    data = f.read()
                info = tarfile.TarInfo(arc)
                info.size = len(data)
                info.mtime = 1704164646
                info.mode = 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = "user"
                packed.addfile(info, io.BytesIO(data))
        with open(archive, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped:
                zipped.write(buffer.getvalue())
    shutil.rmtree(stage)
"#;

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
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
    // Medium on: an archive of the other kind inside, whose CSV files count too.
    let inner = (level != Level::Easy).then(|| {
        let name = if archive.ends_with(".zip") {
            *g.pick(&["older.tar.gz", "part2.tgz", "archive.tar.gz"])
        } else {
            *g.pick(&["older.zip", "part2.zip", "more.zip"])
        };
        format!("{top}/{}/{name}", g.pick(&folders))
    });
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    // (region, amount) of every CSV row with an amount.
    let mut rows_seen: Vec<(&str, f64)> = Vec::new();
    let csvs = level.pick(g.int(3, 6), g.int(6, 10), g.int(9, 14));
    for i in 0..csvs {
        let mut folder = format!("{top}/{}", g.pick(&folders));
        if g.chance(0.4) {
            folder = format!("{folder}/{}", g.pick(&folders));
        }
        let nested = inner.is_some() && (i == 0 || g.chance(0.35));
        let path = format!("{folder}/{}_{}.csv", g.pick(STEMS), i + 1);
        // Columns in a per-file order: the amount is not always in the same place.
        let mut columns = vec!["id", "date", "region", "amount"];
        if g.chance(0.5) {
            columns.push("note");
        }
        g.shuffle(&mut columns);
        let mut table = Vec::new();
        for _ in 0..level.pick(g.int(5, 40), g.int(10, 60), g.int(20, 80)) {
            let region = *g.pick(&regions);
            let amount = if level == Level::Easy {
                g.money(-50.0, 900.0, 2)
            } else {
                g.money(-50.0, 2500.0, 2)
            };
            let amount = if amount < 0.0 && g.chance(0.7) {
                -amount
            } else {
                amount
            };
            // Hard: some amounts are missing.
            let missing = hard && g.chance(0.05);
            if !missing {
                rows_seen.push((region, amount));
            }
            let row: Vec<String> = columns
                .iter()
                .map(|c| match *c {
                    "id" => g.int(10_000, 99_999).to_string(),
                    "date" => crate::families::date_of(g.int(0, 6 * 365)),
                    "region" => region.to_owned(),
                    "amount" if missing => String::new(),
                    "amount" if level != Level::Easy && amount.abs() >= 1000.0 => {
                        thousands(amount, 2)
                    }
                    "amount" => format!("{amount:.2}"),
                    _ => format!("{} {}", g.word(), g.word()),
                })
                .collect();
            table.push(row);
        }
        let mut bytes = csv_bytes(&columns, &table);
        if hard && g.chance(0.4) {
            // Written on Windows: a byte order mark and \r\n line ends.
            let text = String::from_utf8_lossy(&bytes).replace('\n', "\r\n");
            bytes = format!("\u{feff}{text}").into_bytes();
        }
        let stage = if nested { INNER_STAGE } else { STAGE };
        files.push((format!("{stage}/{path}"), bytes));
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
    if hard {
        // A stale copy whose name does not end in .csv.
        let folder = g.pick(&folders);
        let mut table = Vec::new();
        for _ in 0..g.int(3, 10) {
            table.push(vec![
                g.int(10_000, 99_999).to_string(),
                (*g.pick(&regions)).to_owned(),
                format!("{:.2}", g.money(1.0, 900.0, 2)),
            ]);
        }
        files.push((
            format!("{STAGE}/{top}/{folder}/{}.csv.bak", g.pick(STEMS)),
            csv_bytes(&["id", "region", "amount"], &table),
        ));
    }
    let kind = if archive.ends_with(".zip") {
        "zip archive"
    } else {
        "gzip-compressed tar archive"
    };
    let opening = match g.index(4) {
        0 => format!("The file {archive} in your home directory is a {kind}."),
        1 => format!("In your home directory, the file {archive} is a {kind}."),
        2 => format!("Your home directory holds the file {archive}, a {kind}."),
        _ => format!("Someone left the file {archive}, a {kind}, in your home directory."),
    };
    let mut intro = format!(
        "{opening} Inside, in nested folders, are CSV files (names ending in .csv) and a few \
         other files. Every CSV file has a header row with the columns id, date, region and \
         amount (and sometimes note), in an order that differs between files."
    );
    if let Some(inner) = &inner {
        let name = inner.rsplit('/').next().unwrap_or(inner);
        intro.push_str(&format!(
            " One of the files inside, {name}, is itself an archive: the CSV files in it count \
             too. An amount of 1000 or more may be written with commas between thousands \
             (\"1,234.50\")."
        ));
    }
    if hard {
        intro.push_str(
            " Some CSV files were saved on Windows (a byte order mark, \\r\\n line ends), and \
             a row whose amount is empty has no amount: leave it out, of a mean too.",
        );
    }
    let (what, value) = match g.index(3) {
        0 => (
            "the sum of the amount column over every row of every CSV file in the archive"
                .to_owned(),
            rows_seen.iter().map(|r| r.1).sum::<f64>(),
        ),
        1 => {
            let region = *g.pick(&regions);
            (
                format!(
                    "the sum of the amount column over the rows whose region is {region}, \
                     across every CSV file in the archive"
                ),
                rows_seen
                    .iter()
                    .filter(|r| r.0 == region)
                    .map(|r| r.1)
                    .sum::<f64>(),
            )
        }
        _ => (
            "the mean of the amount column over every row of every CSV file in the archive"
                .to_owned(),
            rows_seen.iter().map(|r| r.1).sum::<f64>() / rows_seen.len() as f64,
        ),
    };
    let asked = question(g, &what);
    let mut instance = Instance::new(
        format!("{intro} {asked} {}", precision(g, 2)),
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
    let mut setup = PACK.to_owned();
    if let Some(inner) = &inner {
        setup.push_str(&format!(
            "_pack({INNER_STAGE:?}, {:?})\n",
            format!("{STAGE}/{inner}")
        ));
    }
    setup.push_str(&format!("_pack({STAGE:?}, {archive:?})\n"));
    instance.setup(setup)
}
