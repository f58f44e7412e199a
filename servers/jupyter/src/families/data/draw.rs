//! What the data families share: redrawing an instance whose answer would be fragile or
//! visible ([`draw`]), and the setup code that builds an instance's SQLite database
//! ([`Database`]).

use crate::families::{Gen, Instance};

/// Attempts before an instance is kept whatever its flaw.
const ATTEMPTS: usize = 100;

/// One attempt of a generator: a gradeable instance, and whether it is sound (its answer
/// clear of ties and of rounding edges, its data rich enough for the question).
pub(super) struct Attempt {
    instance: Instance,
    sound: bool,
}

impl Attempt {
    /// `instance`, sound or better drawn again.
    pub(super) fn new(instance: Instance, sound: bool) -> Self {
        Self { instance, sound }
    }
}

/// Draws from `make` until an instance is sound and its secret answer shows in neither its
/// prompt nor its files (a computed total can equal some number in the data by chance; that
/// instance is drawn again rather than kept). Every draw comes from `g`, so the instance
/// number alone still fixes the result.
pub(super) fn draw(g: &mut Gen, make: fn(&mut Gen) -> Attempt) -> Instance {
    let mut attempt = make(g);
    for _ in 1..ATTEMPTS {
        if attempt.sound && !leaks(&attempt.instance) {
            break;
        }
        attempt = make(g);
    }
    // After ATTEMPTS flawed draws (never seen in practice) the last one is kept.
    attempt.instance
}

/// Whether the instance's secret appears in its prompt or in one of its files.
fn leaks(instance: &Instance) -> bool {
    let Some(secret) = &instance.secret else {
        return false;
    };
    let needle = secret.as_bytes();
    if needle.is_empty() {
        return false;
    }
    instance.prompt.contains(secret.as_str())
        || instance
            .files
            .iter()
            .any(|(_, bytes)| match std::str::from_utf8(bytes) {
                // Text files (all of them, in practice) use the standard library's fast search.
                Ok(text) => text.contains(secret.as_str()),
                Err(_) => bytes.windows(needle.len()).any(|w| w == needle),
            })
}

/// A value in a row of a [`Database`] table, as the setup's Python writes it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Sql {
    /// An integer.
    Int(i64),
    /// A float, written in Rust's shortest form (a whole value as an integer, which a `REAL`
    /// column stores as a float all the same).
    Real(f64),
    /// A text.
    Text(String),
}

impl From<i64> for Sql {
    fn from(value: i64) -> Self {
        Sql::Int(value)
    }
}

impl From<f64> for Sql {
    fn from(value: f64) -> Self {
        Sql::Real(value)
    }
}

impl From<&str> for Sql {
    fn from(value: &str) -> Self {
        Sql::Text(value.to_owned())
    }
}

impl From<String> for Sql {
    fn from(value: String) -> Self {
        Sql::Text(value)
    }
}

impl std::fmt::Display for Sql {
    /// The value as a Python literal.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sql::Int(value) => write!(f, "{value}"),
            Sql::Real(value) => write!(f, "{value}"),
            // Rust's escaping of the printable text the families write is Python's too.
            Sql::Text(value) => write!(f, "{value:?}"),
        }
    }
}

/// One table of a [`Database`]: its name, its column declarations and its rows.
struct Table {
    name: &'static str,
    columns: &'static str,
    rows: Vec<Vec<Sql>>,
}

/// A SQLite database an instance's setup builds with Python's sqlite3: tables created and
/// filled in a fixed order, so that every setup of the instance writes the same bytes.
pub(super) struct Database {
    file: &'static str,
    /// Tables in groups: a group's tables are all created, then all filled, before the next
    /// group's (the order of the statements fixes the file's bytes).
    groups: Vec<Vec<Table>>,
}

impl Database {
    /// An empty database written to `file` in the home folder.
    pub(super) fn new(file: &'static str) -> Self {
        Self {
            file,
            groups: vec![Vec::new()],
        }
    }

    /// Adds the table `name` with the column declarations `columns` (as `CREATE TABLE` takes
    /// them, one declaration per column) and `rows`.
    pub(super) fn table(
        mut self,
        name: &'static str,
        columns: &'static str,
        rows: impl IntoIterator<Item = Vec<Sql>>,
    ) -> Self {
        let table = Table {
            name,
            columns,
            rows: rows.into_iter().collect(),
        };
        self.groups.last_mut().expect("a group").push(table);
        self
    }

    /// Starts a new group: the tables added from here on are created after the earlier ones
    /// are filled.
    pub(super) fn then(mut self) -> Self {
        self.groups.push(Vec::new());
        self
    }

    /// The Python that builds the database (it leaves no names behind).
    pub(super) fn setup(&self) -> String {
        let mut code = format!("import sqlite3\ndb = sqlite3.connect({:?})\n", self.file);
        for group in &self.groups {
            for table in group {
                code.push_str(&format!(
                    "db.execute(\"CREATE TABLE {} ({})\")\n",
                    table.name, table.columns
                ));
            }
            for table in group {
                let placeholders = vec!["?"; column_count(table.columns)].join(", ");
                code.push_str(&format!(
                    "db.executemany(\"INSERT INTO {} VALUES ({placeholders})\", [",
                    table.name
                ));
                for row in &table.rows {
                    let values: Vec<String> = row.iter().map(Sql::to_string).collect();
                    // A one-value tuple needs its comma.
                    let comma = if values.len() == 1 { "," } else { "" };
                    code.push_str(&format!("({}{comma}), ", values.join(", ")));
                }
                code.push_str("])\n");
            }
        }
        code.push_str("db.commit()\ndb.close()\ndel db, sqlite3\n");
        code
    }
}

/// How many columns a list of column declarations declares (commas inside parentheses, as in
/// `REFERENCES t(a, b)`, do not separate columns).
fn column_count(columns: &str) -> usize {
    let mut depth = 0;
    let mut count = 1;
    for c in columns.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => count += 1,
            _ => {}
        }
    }
    count
}

/// Python that saves the openpyxl workbook `_wb` as `file` with the same bytes on every run:
/// the document's dates fixed and every zip entry stamped 1980-01-01 (openpyxl writes the
/// time of saving into both).
pub(super) fn save_workbook(file: &str) -> String {
    format!(
        r#"import datetime as _xdt
import io as _xio
import re as _xre
import zipfile as _xzip

_wb.properties.created = _xdt.datetime(2024, 1, 1)
_xbuffer = _xio.BytesIO()
_wb.save(_xbuffer)
with _xzip.ZipFile(_xbuffer) as _xsrc, _xzip.ZipFile({file:?}, "w") as _xout:
    for _xinfo in _xsrc.infolist():
        _xdata = _xsrc.read(_xinfo.filename)
        if _xinfo.filename == "docProps/core.xml":
            _xdata = _xre.sub(rb"\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"2024-01-01T00:00:00Z", _xdata)
        _xout.writestr(_xzip.ZipInfo(_xinfo.filename, (1980, 1, 1, 0, 0, 0)), _xdata,
                       compress_type=_xzip.ZIP_DEFLATED)
del _xdt, _xio, _xre, _xzip, _xbuffer, _xsrc, _xout, _xinfo, _xdata
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_setup_creates_each_group_then_fills_it() {
        let setup = Database::new("x.db")
            .table(
                "a",
                "id INTEGER PRIMARY KEY, name TEXT REFERENCES b(id, k)",
                [vec![Sql::from(1), Sql::from("one")]],
            )
            .then()
            .table("c", "v REAL", [vec![Sql::from(1.5)], vec![Sql::from(2.0)]])
            .setup();
        assert_eq!(
            setup,
            "import sqlite3\ndb = sqlite3.connect(\"x.db\")\n\
             db.execute(\"CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT REFERENCES b(id, k))\")\n\
             db.executemany(\"INSERT INTO a VALUES (?, ?)\", [(1, \"one\"), ])\n\
             db.execute(\"CREATE TABLE c (v REAL)\")\n\
             db.executemany(\"INSERT INTO c VALUES (?)\", [(1.5,), (2,), ])\n\
             db.commit()\ndb.close()\ndel db, sqlite3\n"
        );
    }
}
