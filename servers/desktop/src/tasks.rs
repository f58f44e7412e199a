//! The desktop tasks: what the agent is asked, the files and applications its desktop starts
//! with, the hidden checks that grade it, and a scripted keyboard-only solution.
//!
//! Everything is static data. A task's public part is its id and [`DesktopTask::instruction`];
//! its [`DesktopTask::checks`] are the grader (see [`crate::grading`]) and its
//! [`DesktopTask::demo`] is a reference solution that tests play on a real display to prove the
//! task solvable and its grader sound: the checks must fail on the untouched desktop and pass
//! after the demo.
//!
//! How a task runs: the environment writes [`DesktopTask::files`] into a fresh, empty home
//! folder (seen as `/home/user` by the applications), then starts each argv of
//! [`DesktopTask::launch`] in order, in the background, inside the application jail with
//! `HOME=/home/user` and the working directory at home. Under openbox the newest window has
//! the keyboard focus, so the last application launched is the one a demo starts typing into.
//! A window can be listed before its application accepts keys, so every demo starts with a
//! wait, and ends with one so that a save has reached the disk before the grader looks.
//!
//! What the applications do, as found on Debian (the demos depend on it):
//!
//! - `xterm` runs bash; `printf '\033]2;TITLE\007'` sets its window title, and `xclip
//!   -selection clipboard FILE` keeps the clipboard while the terminal lives.
//! - `mousepad` opens its Save As dialog (Ctrl+S on an untitled document, Ctrl+Shift+S) with
//!   the name field focused and the folder at home. A Return pressed within a few hundred
//!   milliseconds of typing the name is swallowed by the field's completion, hence the waits.
//!   Ctrl+R is Find and Replace; Escape closes it.
//! - `gnumeric` saving a workbook opened from CSV (Ctrl+S) opens Save As with the type
//!   "Gnumeric XML": a `.gnumeric` name saves at once, another extension asks for
//!   confirmation. Typing in a column auto-completes from its entries, so demos never type a
//!   prefix of an existing entry.
//! - `galculator` drops keys that arrive while it animates the button of the previous one.
//!   Ctrl+C copies the display's number (`888`, `0.875`), without a newline.
//! - `pcmanfm`'s folder view has the focus at start; typing selects by name, Escape ends the
//!   search and keeps the selection, Return opens it. Ctrl+Shift+N asks for a new folder's
//!   name, F2 renames, Delete asks whether to move to the trash (`~/.local/share/Trash`, Yes
//!   focused), Ctrl+X / Ctrl+C then Ctrl+V in another folder moves or copies.

use mcpgym_env::{Split, TaskSet};

use crate::grading::Check;

/// The home folder as the applications see it.
pub const HOME: &str = "/home/user";

/// The application a task is mainly about (a few tasks use two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum App {
    /// `xterm` running bash.
    Terminal,
    /// `mousepad`, a GTK text editor.
    TextEditor,
    /// `gnumeric`, a spreadsheet.
    Spreadsheet,
    /// `galculator`, a calculator.
    Calculator,
    /// `pcmanfm`, a file manager.
    FileManager,
}

/// One step of a scripted, keyboard-only solution. There are no coordinates, so a demo does
/// not depend on where the window manager places windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "step", content = "arg", rename_all = "snake_case")]
pub enum DemoStep {
    /// Types the text, as the environment's `type` action does (about 12 ms per character).
    /// Never contains a newline: a demo presses `Return` with [`DemoStep::Key`] instead,
    /// because a typed newline can be lost.
    Type(&'static str),
    /// Presses one key chord, in xdotool syntax: `ctrl+s`, `Return`, `alt+F4`, `KP_Multiply`.
    Key(&'static str),
    /// Waits this many milliseconds (for a dialog to open, a file to save).
    Wait(u32),
}

/// One desktop task.
#[derive(Debug, Clone, Copy)]
pub struct DesktopTask {
    /// The stable id, `desktop-<split>-<nnn>`.
    pub id: &'static str,
    /// The split the task belongs to.
    pub split: Split,
    /// The application the task is mainly about.
    pub app: App,
    /// What the agent is told: exactly what to produce (names, text), never how it is checked.
    pub instruction: &'static str,
    /// Files written into the home folder before the applications start: (path relative to
    /// home, text). Parent folders are created.
    pub files: &'static [(&'static str, &'static str)],
    /// The applications to start, in order, each an argv run with the working directory at
    /// home.
    pub launch: &'static [&'static [&'static str]],
    /// The grader: every check must pass. Secret.
    pub checks: &'static [Check],
    /// A keyboard-only reference solution, played once the windows are up. Secret.
    pub demo: &'static [DemoStep],
}

impl DesktopTask {
    /// The programs the task launches (each argv's first word), for coverage reports.
    pub fn programs(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.launch.iter().filter_map(|argv| argv.first().copied())
    }
}

// Short names for the catalog's demos.
use DemoStep::{Key, Type, Wait};

const XTERM: &[&[&str]] = &[&["xterm"]];
const GALCULATOR: &[&[&str]] = &[&["galculator"]];
const PCMANFM: &[&[&str]] = &[&["pcmanfm", HOME]];

/// Every task. Ids number each split in order of appearance.
static CATALOG: &[DesktopTask] = &[
    // ---------------------------------------------------------------- terminal (xterm)
    DesktopTask {
        id: "desktop-train-000",
        split: Split::Train,
        app: App::Terminal,
        instruction: "Using the terminal, create the folder projects/alpha inside your home folder (/home/user), and in it a text file named README.txt whose only line is: Alpha project",
        files: &[],
        launch: XTERM,
        checks: &[
            Check::DirExists {
                path: "projects/alpha",
            },
            Check::FileEquals {
                path: "projects/alpha/README.txt",
                text: "Alpha project",
            },
        ],
        demo: &[
            Wait(1500),
            Type("mkdir -p projects/alpha && echo 'Alpha project' > projects/alpha/README.txt"),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-001",
        split: Split::Train,
        app: App::Terminal,
        instruction: "In your home folder (/home/user) there is a file named draft.txt. Using the terminal, rename it to report-final.txt (its content must stay the same).",
        files: &[(
            "draft.txt",
            "Quarterly report, final version.\nRevenue grew 4%.\n",
        )],
        launch: XTERM,
        checks: &[
            Check::FileMissing { path: "draft.txt" },
            Check::FileEquals {
                path: "report-final.txt",
                text: "Quarterly report, final version.\nRevenue grew 4%.",
            },
        ],
        demo: &[
            Wait(1500),
            Type("mv draft.txt report-final.txt"),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-002",
        split: Split::Train,
        app: App::Terminal,
        instruction: "The file names.txt in your home folder (/home/user) lists one name per line. Using the terminal, create sorted.txt in the same folder holding the same names sorted alphabetically, one per line.",
        files: &[(
            "names.txt",
            "Oscar\nMira\nBruno\nZoe\nElena\nHugo\nAnika\nTheo\n",
        )],
        launch: XTERM,
        checks: &[Check::FileEquals {
            path: "sorted.txt",
            text: "Anika\nBruno\nElena\nHugo\nMira\nOscar\nTheo\nZoe",
        }],
        demo: &[
            Wait(1500),
            Type("sort names.txt > sorted.txt"),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-003",
        split: Split::Train,
        app: App::Terminal,
        instruction: "The file server.log in your home folder (/home/user) is a log. Count the lines that contain the word ERROR and write that number (digits only) into a new file error_count.txt in your home folder.",
        files: &[(
            "server.log",
            "08:00:01 INFO start\n08:00:05 ERROR disk quota\n08:01:10 INFO request /a\n08:02:11 WARN slow\n08:03:00 ERROR timeout on /b\n08:03:30 INFO request /c\n08:04:45 ERROR timeout on /d\n08:05:00 INFO request /e\n08:06:12 ERROR worker crashed\n08:07:00 INFO stop\n",
        )],
        launch: XTERM,
        checks: &[Check::FileEquals {
            path: "error_count.txt",
            text: "4",
        }],
        demo: &[
            Wait(1500),
            Type("grep -c ERROR server.log > error_count.txt"),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-test-000",
        split: Split::Test,
        app: App::Terminal,
        instruction: "Change the title of the terminal window to exactly: Deploy finished",
        files: &[],
        launch: XTERM,
        checks: &[Check::WindowTitleEquals("Deploy finished")],
        demo: &[
            Wait(1500),
            Type("printf '\\033]2;Deploy finished\\007'"),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-004",
        split: Split::Train,
        app: App::Terminal,
        instruction: "The file token.txt in your home folder (/home/user) holds an access token. Put that token on the clipboard (the CLIPBOARD selection, what Ctrl+V pastes), for example with xclip in the terminal.",
        files: &[("token.txt", "tok-5F2A-99QX-ZL7M\n")],
        launch: XTERM,
        checks: &[Check::ClipboardEquals("tok-5F2A-99QX-ZL7M")],
        demo: &[
            Wait(1500),
            Type("xclip -selection clipboard token.txt"),
            Key("Return"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-test-001",
        split: Split::Test,
        app: App::Terminal,
        instruction: "The folder cache in your home folder (/home/user) holds temporary files. Delete every file in cache whose name ends in .tmp, and keep all other files.",
        files: &[
            ("cache/a1.tmp", "temporary\n"),
            ("cache/b2.tmp", "temporary\n"),
            ("cache/session.tmp", "temporary\n"),
            ("cache/settings.dat", "keep me\n"),
            ("cache/notes.txt", "keep me too\n"),
        ],
        launch: XTERM,
        checks: &[
            Check::FileMissing {
                path: "cache/a1.tmp",
            },
            Check::FileMissing {
                path: "cache/b2.tmp",
            },
            Check::FileMissing {
                path: "cache/session.tmp",
            },
            Check::FileEquals {
                path: "cache/settings.dat",
                text: "keep me",
            },
            Check::FileEquals {
                path: "cache/notes.txt",
                text: "keep me too",
            },
        ],
        demo: &[Wait(1500), Type("rm cache/*.tmp"), Key("Return"), Wait(700)],
    },
    DesktopTask {
        id: "desktop-train-005",
        split: Split::Train,
        app: App::Terminal,
        instruction: "Append a new last line to the file changelog.txt in your home folder (/home/user), keeping the existing lines. The new line must be exactly: v1.2.0 - fixed login bug",
        files: &[(
            "changelog.txt",
            "v1.0.0 - first release\nv1.1.0 - added export\n",
        )],
        launch: XTERM,
        checks: &[Check::FileEquals {
            path: "changelog.txt",
            text: "v1.0.0 - first release\nv1.1.0 - added export\nv1.2.0 - fixed login bug",
        }],
        demo: &[
            Wait(1500),
            Type("echo 'v1.2.0 - fixed login bug' >> changelog.txt"),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-006",
        split: Split::Train,
        app: App::Terminal,
        instruction: "Find the largest file (in bytes) in the folder data inside your home folder (/home/user), then set the title of the terminal window to exactly that file's name (the name only, without the folder).",
        files: &[
            ("data/alpha.csv", "id,value\n1,10\n2,20\n"),
            (
                "data/cities.csv",
                "city,country,population\nOslo,Norway,709000\nLima,Peru,10092000\nPerth,Australia,2141000\nQuito,Ecuador,2011000\nCairo,Egypt,10230000\n",
            ),
            (
                "data/notes.txt",
                "remember to update the population figures\n",
            ),
            ("data/readme.md", "# Data\nSmall sample files.\n"),
        ],
        launch: XTERM,
        checks: &[Check::WindowTitleEquals("cities.csv")],
        demo: &[
            Wait(1500),
            Type("printf '\\033]2;%s\\007' \"$(ls -S data | head -n 1)\""),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-test-002",
        split: Split::Test,
        app: App::Terminal,
        instruction: "Copy every .csv file from the folder incoming (in your home folder, /home/user) into a new folder named backup in your home folder. The originals must stay in incoming; other files are not copied.",
        files: &[
            ("incoming/jan.csv", "day,amount\n1,120\n2,80\n"),
            ("incoming/feb.csv", "day,amount\n1,95\n2,140\n"),
            ("incoming/readme.txt", "monthly exports\n"),
        ],
        launch: XTERM,
        checks: &[
            Check::FileEquals {
                path: "backup/jan.csv",
                text: "day,amount\n1,120\n2,80",
            },
            Check::FileEquals {
                path: "backup/feb.csv",
                text: "day,amount\n1,95\n2,140",
            },
            Check::FileMissing {
                path: "backup/readme.txt",
            },
            Check::FileExists {
                path: "incoming/jan.csv",
            },
            Check::FileExists {
                path: "incoming/feb.csv",
            },
        ],
        demo: &[
            Wait(1500),
            Type("mkdir -p backup && cp incoming/*.csv backup/"),
            Key("Return"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-007",
        split: Split::Train,
        app: App::Terminal,
        instruction: "The file words.txt in your home folder (/home/user) has one word per line, some repeated. Create unique.txt in your home folder with each distinct word exactly once, sorted alphabetically, one per line.",
        files: &[(
            "words.txt",
            "pear\napple\nfig\napple\nkiwi\npear\nfig\nplum\napple\n",
        )],
        launch: XTERM,
        checks: &[Check::FileEquals {
            path: "unique.txt",
            text: "apple\nfig\nkiwi\npear\nplum",
        }],
        demo: &[
            Wait(1500),
            Type("sort -u words.txt > unique.txt"),
            Key("Return"),
            Wait(700),
        ],
    },
    // ---------------------------------------------------------------- text editor (mousepad)
    DesktopTask {
        id: "desktop-train-008",
        split: Split::Train,
        app: App::TextEditor,
        instruction: "The text editor has shopping.txt (in /home/user) open. Add a new last line with the single word milk, keeping the other lines, and save the file.",
        files: &[("shopping.txt", "eggs\nflour\nbutter\n")],
        launch: &[&["mousepad", "shopping.txt"]],
        checks: &[Check::FileEquals {
            path: "shopping.txt",
            text: "eggs\nflour\nbutter\nmilk",
        }],
        demo: &[
            Wait(1000),
            // The file ends with a newline, so the end of the text is already a fresh line.
            Key("ctrl+End"),
            Type("milk"),
            Wait(100),
            Key("ctrl+s"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-train-009",
        split: Split::Train,
        app: App::TextEditor,
        instruction: "In the text editor, write a document whose only line is: Meeting moved to 3 pm. Save it in your home folder (/home/user) as meeting.txt.",
        files: &[],
        launch: &[&["mousepad"]],
        checks: &[Check::FileEquals {
            path: "meeting.txt",
            text: "Meeting moved to 3 pm",
        }],
        demo: &[
            Wait(1000),
            Type("Meeting moved to 3 pm"),
            Key("ctrl+s"),
            // The save dialog opens with its name field focused; a Return pressed too soon
            // after typing the name is swallowed by the field's completion.
            Wait(900),
            Type("meeting.txt"),
            Wait(400),
            Key("Return"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-test-003",
        split: Split::Test,
        app: App::TextEditor,
        instruction: "The text editor has config.ini (in /home/user) open. Replace every occurrence of localhost with db.internal, change nothing else, and save the file.",
        files: &[(
            "config.ini",
            "[primary]\nhost = localhost\nport = 5432\n\n[replica]\nhost = localhost\nport = 5433\n\n[cache]\nurl = redis://localhost:6379\n",
        )],
        launch: &[&["mousepad", "config.ini"]],
        checks: &[Check::FileEquals {
            path: "config.ini",
            text: "[primary]\nhost = db.internal\nport = 5432\n\n[replica]\nhost = db.internal\nport = 5433\n\n[cache]\nurl = redis://db.internal:6379",
        }],
        demo: &[
            Wait(1000),
            // Search > Find and Replace: the search field has the focus, Tab reaches the
            // replacement; six more Tabs reach "Replace all in", whose check turns the Replace
            // button into "Replace All", three Tabs further.
            Key("ctrl+r"),
            Wait(600),
            Type("localhost"),
            Key("Tab"),
            Type("db.internal"),
            Key("Tab"),
            Key("Tab"),
            Key("Tab"),
            Key("Tab"),
            Key("Tab"),
            Key("Tab"),
            Key("space"),
            Wait(200),
            Key("Tab"),
            Key("Tab"),
            Key("Tab"),
            Key("space"),
            Wait(300),
            Key("Escape"),
            Wait(300),
            Key("ctrl+s"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-train-010",
        split: Split::Train,
        app: App::TextEditor,
        instruction: "The text editor has todo.txt (in /home/user) open. Delete the line that says DELETE ME (the whole line, so no empty line is left in its place), keep the other lines, and save the file.",
        files: &[(
            "todo.txt",
            "write report\nDELETE ME\ncall Sam\nbook flights\n",
        )],
        launch: &[&["mousepad", "todo.txt"]],
        checks: &[Check::FileEquals {
            path: "todo.txt",
            text: "write report\ncall Sam\nbook flights",
        }],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Key("Down"),
            Key("Home"),
            Key("shift+Down"),
            Key("Delete"),
            Wait(100),
            Key("ctrl+s"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-train-011",
        split: Split::Train,
        app: App::TextEditor,
        instruction: "The text editor has quotes.txt (in /home/user) open. Copy the whole second line of the file (without its line break) to the clipboard.",
        files: &[(
            "quotes.txt",
            "Simplicity is prerequisite for reliability.\nPremature optimization is the root of all evil.\nTalk is cheap. Show me the code.\n",
        )],
        launch: &[&["mousepad", "quotes.txt"]],
        checks: &[Check::ClipboardEquals(
            "Premature optimization is the root of all evil.",
        )],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Key("Down"),
            Key("Home"),
            Key("shift+End"),
            Key("ctrl+c"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-test-004",
        split: Split::Test,
        app: App::TextEditor,
        instruction: "The text editor has letter.txt (in /home/user) open. Insert a new first line with the single word DRAFT and save the result as a new file letter-draft.txt in your home folder; letter.txt itself must keep its original text.",
        files: &[(
            "letter.txt",
            "Dear Ms. Novak,\nthank you for your order.\nKind regards,\nPiet\n",
        )],
        launch: &[&["mousepad", "letter.txt"]],
        checks: &[
            Check::FileEquals {
                path: "letter-draft.txt",
                text: "DRAFT\nDear Ms. Novak,\nthank you for your order.\nKind regards,\nPiet",
            },
            Check::FileEquals {
                path: "letter.txt",
                text: "Dear Ms. Novak,\nthank you for your order.\nKind regards,\nPiet",
            },
        ],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Type("DRAFT"),
            Key("Return"),
            Wait(100),
            // File > Save As: the name field holds the current name, selected up to the dot.
            Key("ctrl+shift+s"),
            Wait(900),
            Key("ctrl+a"),
            Type("letter-draft.txt"),
            Wait(400),
            Key("Return"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-train-012",
        split: Split::Train,
        app: App::TextEditor,
        instruction: "The text editor has poem.txt (in /home/user) open. Its third line has a typo: \"teh\" must be \"the\". Fix it (change nothing else) and save the file.",
        files: &[(
            "poem.txt",
            "Roses are red,\nviolets are blue,\nteh sun is warm\nand so are you.\n",
        )],
        launch: &[&["mousepad", "poem.txt"]],
        checks: &[Check::FileEquals {
            path: "poem.txt",
            text: "Roses are red,\nviolets are blue,\nthe sun is warm\nand so are you.",
        }],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Key("Down"),
            Key("Down"),
            Key("Home"),
            Key("shift+ctrl+Right"),
            Type("the"),
            Wait(100),
            Key("ctrl+s"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-train-013",
        split: Split::Train,
        app: App::TextEditor,
        instruction: "The text editor has hosts.txt (in /home/user) open. Add the line 10.0.0.5 build.local to it (anywhere), keep the existing lines, and save the file.",
        files: &[(
            "hosts.txt",
            "127.0.0.1 localhost\n10.0.0.2 db.local\n10.0.0.3 cache.local\n",
        )],
        launch: &[&["mousepad", "hosts.txt"]],
        checks: &[
            Check::FileContainsLine {
                path: "hosts.txt",
                line: "10.0.0.5 build.local",
            },
            Check::FileContainsLine {
                path: "hosts.txt",
                line: "127.0.0.1 localhost",
            },
            Check::FileContainsLine {
                path: "hosts.txt",
                line: "10.0.0.2 db.local",
            },
            Check::FileContainsLine {
                path: "hosts.txt",
                line: "10.0.0.3 cache.local",
            },
        ],
        demo: &[
            Wait(1000),
            // A new first line: the start of the file, the text, then a line break.
            Key("ctrl+Home"),
            Type("10.0.0.5 build.local"),
            Key("Return"),
            Wait(100),
            Key("ctrl+s"),
            Wait(1000),
        ],
    },
    // ---------------------------------------------------------------- spreadsheet (gnumeric)
    DesktopTask {
        id: "desktop-train-014",
        split: Split::Train,
        app: App::Spreadsheet,
        instruction: "The spreadsheet has data.csv (in /home/user) open. In cell A5 type total, and in cell B5 enter a formula that sums B2:B4. Save the workbook in Gnumeric format as totals.gnumeric in your home folder.",
        files: &[("data.csv", "item,qty\napples,3\npears,5\nplums,9\n")],
        launch: &[&["gnumeric", "data.csv"]],
        checks: &[
            Check::SpreadsheetCell {
                path: "totals.gnumeric",
                sheet: None,
                cell: "A5",
                value: "total",
            },
            Check::SpreadsheetCell {
                path: "totals.gnumeric",
                sheet: None,
                cell: "B5",
                value: "17",
            },
            Check::SpreadsheetCell {
                path: "totals.gnumeric",
                sheet: None,
                cell: "A4",
                value: "plums",
            },
        ],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Key("Down"),
            Key("Down"),
            Key("Down"),
            Key("Down"),
            Type("total"),
            Key("Tab"),
            Type("=SUM(B2:B4)"),
            Key("Return"),
            Wait(200),
            // Saving a workbook opened from CSV asks for a name and format; the name field
            // holds "data.csv", replaced whole. The .gnumeric extension matches the default
            // format, so no confirmation follows.
            Key("ctrl+s"),
            Wait(1000),
            Key("ctrl+a"),
            Type("totals.gnumeric"),
            Wait(400),
            Key("Return"),
            Wait(1100),
        ],
    },
    DesktopTask {
        id: "desktop-train-015",
        split: Split::Train,
        app: App::Spreadsheet,
        instruction: "In the spreadsheet, make this table starting at cell A1: the header row Name, Score; then the rows Ana, 92; Ben, 78; Cleo, 85 (names in column A, scores in column B). Save it in Gnumeric format as scores.gnumeric in your home folder (/home/user).",
        files: &[],
        launch: &[&["gnumeric"]],
        checks: &[
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "A1",
                value: "Name",
            },
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "B1",
                value: "Score",
            },
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "A2",
                value: "Ana",
            },
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "B2",
                value: "92",
            },
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "A3",
                value: "Ben",
            },
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "B3",
                value: "78",
            },
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "A4",
                value: "Cleo",
            },
            Check::SpreadsheetCell {
                path: "scores.gnumeric",
                sheet: None,
                cell: "B4",
                value: "85",
            },
        ],
        demo: &[
            Wait(1000),
            // Tab moves right; Return after Tabs goes back to the row's first column.
            Type("Name"),
            Key("Tab"),
            Type("Score"),
            Key("Return"),
            Type("Ana"),
            Key("Tab"),
            Type("92"),
            Key("Return"),
            Type("Ben"),
            Key("Tab"),
            Type("78"),
            Key("Return"),
            Type("Cleo"),
            Key("Tab"),
            Type("85"),
            Key("Return"),
            Wait(200),
            Key("ctrl+s"),
            Wait(1000),
            Key("ctrl+a"),
            Type("scores.gnumeric"),
            Wait(400),
            Key("Return"),
            Wait(1100),
        ],
    },
    DesktopTask {
        id: "desktop-test-005",
        split: Split::Test,
        app: App::Spreadsheet,
        instruction: "The spreadsheet has prices.csv (in /home/user) open. In cell A7 type mean, and in cell B7 enter a formula for the average of B2:B6. Save the workbook in Gnumeric format as prices.gnumeric in your home folder.",
        files: &[(
            "prices.csv",
            "product,price\nlamp,24.5\nchair,61\ndesk,149.99\nrug,35.25\nshelf,80\n",
        )],
        launch: &[&["gnumeric", "prices.csv"]],
        checks: &[
            Check::SpreadsheetCell {
                path: "prices.gnumeric",
                sheet: None,
                cell: "A7",
                value: "mean",
            },
            Check::SpreadsheetCell {
                path: "prices.gnumeric",
                sheet: None,
                cell: "B7",
                value: "70.148",
            },
        ],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Key("Down"),
            Key("Down"),
            Key("Down"),
            Key("Down"),
            Key("Down"),
            Key("Down"),
            Type("mean"),
            Key("Tab"),
            Type("=AVERAGE(B2:B6)"),
            Key("Return"),
            Wait(200),
            Key("ctrl+s"),
            Wait(1000),
            Key("ctrl+a"),
            Type("prices.gnumeric"),
            Wait(400),
            Key("Return"),
            Wait(1100),
        ],
    },
    DesktopTask {
        id: "desktop-train-016",
        split: Split::Train,
        app: App::Spreadsheet,
        instruction: "The spreadsheet has inventory.csv (in /home/user) open: item, qty, unit_price. In D1 type value, and in D2, D3 and D4 enter formulas multiplying that row's qty by its unit_price. Save the workbook in Gnumeric format as inventory.gnumeric in your home folder.",
        files: &[(
            "inventory.csv",
            "item,qty,unit_price\nbolts,120,0.25\nnuts,300,0.1\nwashers,75,0.04\n",
        )],
        launch: &[&["gnumeric", "inventory.csv"]],
        checks: &[
            Check::SpreadsheetCell {
                path: "inventory.gnumeric",
                sheet: None,
                cell: "D1",
                value: "value",
            },
            Check::SpreadsheetCell {
                path: "inventory.gnumeric",
                sheet: None,
                cell: "D2",
                value: "30",
            },
            Check::SpreadsheetCell {
                path: "inventory.gnumeric",
                sheet: None,
                cell: "D3",
                value: "30",
            },
            Check::SpreadsheetCell {
                path: "inventory.gnumeric",
                sheet: None,
                cell: "D4",
                value: "3",
            },
        ],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Key("Right"),
            Key("Right"),
            Key("Right"),
            // Return moves down a row.
            Type("value"),
            Key("Return"),
            Type("=B2*C2"),
            Key("Return"),
            Type("=B3*C3"),
            Key("Return"),
            Type("=B4*C4"),
            Key("Return"),
            Wait(200),
            Key("ctrl+s"),
            Wait(1000),
            Key("ctrl+a"),
            Type("inventory.gnumeric"),
            Wait(400),
            Key("Return"),
            Wait(1100),
        ],
    },
    DesktopTask {
        id: "desktop-test-006",
        split: Split::Test,
        app: App::Spreadsheet,
        instruction: "The spreadsheet has temps.csv (in /home/user) open: one temperature reading per day. In cell C1 type max, and in cell C2 enter a formula giving the largest temperature in B2:B8. Save the workbook in Gnumeric format as temps.gnumeric in your home folder.",
        files: &[(
            "temps.csv",
            "day,temp\nMon,14.2\nTue,17.8\nWed,21.4\nThu,19.9\nFri,16.0\nSat,22.7\nSun,18.3\n",
        )],
        launch: &[&["gnumeric", "temps.csv"]],
        checks: &[
            Check::SpreadsheetCell {
                path: "temps.gnumeric",
                sheet: None,
                cell: "C1",
                value: "max",
            },
            Check::SpreadsheetCell {
                path: "temps.gnumeric",
                sheet: None,
                cell: "C2",
                value: "22.7",
            },
        ],
        demo: &[
            Wait(1000),
            Key("ctrl+Home"),
            Key("Right"),
            Key("Right"),
            Type("max"),
            Key("Return"),
            Type("=MAX(B2:B8)"),
            Key("Return"),
            Wait(200),
            Key("ctrl+s"),
            Wait(1000),
            Key("ctrl+a"),
            Type("temps.gnumeric"),
            Wait(400),
            Key("Return"),
            Wait(1100),
        ],
    },
    // ---------------------------------------------------------------- calculator (galculator)
    // galculator animates the on-screen button of every key it receives and drops keys that
    // arrive meanwhile (typing at 12 ms per key loses digits; the same key twice in a row is
    // the most fragile), so its demos press one key at a time, 150 ms apart, and avoid
    // repeated digits. Ctrl+C copies the display's number: digits only, no newline.
    DesktopTask {
        id: "desktop-train-017",
        split: Split::Train,
        app: App::Calculator,
        instruction: "Use the calculator to compute 37 × 24, then copy the result to the clipboard (the calculator's Edit > Copy, Ctrl+C).",
        files: &[],
        launch: GALCULATOR,
        checks: &[Check::ClipboardNumber {
            value: 888.0,
            tolerance: 1e-9,
        }],
        demo: &[
            Wait(1000),
            Key("3"),
            Wait(150),
            Key("7"),
            Wait(150),
            Key("KP_Multiply"),
            Wait(150),
            Key("2"),
            Wait(150),
            Key("4"),
            Wait(150),
            Key("Return"),
            Wait(300),
            Key("ctrl+c"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-018",
        split: Split::Train,
        app: App::Calculator,
        instruction: "Use the calculator to compute (125 + 375) × 16, then copy the result to the clipboard (the calculator's Edit > Copy, Ctrl+C).",
        files: &[],
        launch: GALCULATOR,
        checks: &[Check::ClipboardNumber {
            value: 8000.0,
            tolerance: 1e-9,
        }],
        demo: &[
            Wait(1000),
            Key("parenleft"),
            Wait(150),
            Key("1"),
            Wait(150),
            Key("2"),
            Wait(150),
            Key("5"),
            Wait(150),
            Key("KP_Add"),
            Wait(150),
            Key("3"),
            Wait(150),
            Key("7"),
            Wait(150),
            Key("5"),
            Wait(150),
            Key("parenright"),
            Wait(150),
            Key("KP_Multiply"),
            Wait(150),
            Key("1"),
            Wait(150),
            Key("6"),
            Wait(150),
            Key("Return"),
            Wait(300),
            Key("ctrl+c"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-test-007",
        split: Split::Test,
        app: App::Calculator,
        instruction: "Use the calculator to compute 7 ÷ 8, then copy the result to the clipboard (the calculator's Edit > Copy, Ctrl+C).",
        files: &[],
        launch: GALCULATOR,
        checks: &[Check::ClipboardNumber {
            value: 0.875,
            tolerance: 1e-9,
        }],
        demo: &[
            Wait(1000),
            Key("7"),
            Wait(150),
            Key("KP_Divide"),
            Wait(150),
            Key("8"),
            Wait(150),
            Key("Return"),
            Wait(300),
            Key("ctrl+c"),
            Wait(700),
        ],
    },
    DesktopTask {
        id: "desktop-train-019",
        split: Split::Train,
        app: App::Calculator,
        instruction: "Use the calculator to compute 1024 − 379, then copy the result to the clipboard (the calculator's Edit > Copy, Ctrl+C).",
        files: &[],
        launch: GALCULATOR,
        checks: &[Check::ClipboardNumber {
            value: 645.0,
            tolerance: 1e-9,
        }],
        demo: &[
            Wait(1000),
            Key("1"),
            Wait(150),
            Key("0"),
            Wait(150),
            Key("2"),
            Wait(150),
            Key("4"),
            Wait(150),
            Key("KP_Subtract"),
            Wait(150),
            Key("3"),
            Wait(150),
            Key("7"),
            Wait(150),
            Key("9"),
            Wait(150),
            Key("Return"),
            Wait(300),
            Key("ctrl+c"),
            Wait(700),
        ],
    },
    // ---------------------------------------------------------------- file manager (pcmanfm)
    // The folder view has the keyboard focus at start; typing a name selects the first item
    // that starts with it (Escape closes that search, keeping the selection; Return opens it).
    DesktopTask {
        id: "desktop-train-020",
        split: Split::Train,
        app: App::FileManager,
        instruction: "Using the file manager, create a new folder named Invoices in your home folder (/home/user).",
        files: &[("readme.txt", "Your files live here.\n")],
        launch: PCMANFM,
        checks: &[Check::DirExists { path: "Invoices" }],
        demo: &[
            Wait(1000),
            Key("ctrl+shift+n"),
            Wait(700),
            Type("Invoices"),
            Wait(200),
            Key("Return"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-train-021",
        split: Split::Train,
        app: App::FileManager,
        instruction: "Using the file manager, rename the file IMG_0042.jpg in your home folder (/home/user) to beach.jpg.",
        files: &[
            ("IMG_0042.jpg", "placeholder image: a beach at sunset\n"),
            ("IMG_0043.jpg", "placeholder image: a harbour\n"),
        ],
        launch: PCMANFM,
        checks: &[
            Check::FileMissing {
                path: "IMG_0042.jpg",
            },
            Check::FileEquals {
                path: "beach.jpg",
                text: "placeholder image: a beach at sunset",
            },
            Check::FileExists {
                path: "IMG_0043.jpg",
            },
        ],
        demo: &[
            Wait(1000),
            Type("IMG_0042"),
            Wait(300),
            Key("Escape"),
            Key("F2"),
            Wait(700),
            Key("ctrl+a"),
            Type("beach.jpg"),
            Wait(200),
            Key("Return"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-test-008",
        split: Split::Test,
        app: App::FileManager,
        instruction: "Using the file manager, delete the file junk.log from your home folder (/home/user); moving it to the trash is fine. Keep every other file.",
        files: &[
            ("junk.log", "old debug output\n"),
            ("keep.txt", "important\n"),
        ],
        launch: PCMANFM,
        checks: &[
            Check::FileMissing { path: "junk.log" },
            Check::FileEquals {
                path: "keep.txt",
                text: "important",
            },
        ],
        demo: &[
            Wait(1000),
            Type("junk"),
            Wait(300),
            Key("Escape"),
            Key("Delete"),
            // "Move to trash?" opens with Yes focused.
            Wait(700),
            Key("Return"),
            Wait(1000),
        ],
    },
    DesktopTask {
        id: "desktop-train-022",
        split: Split::Train,
        app: App::FileManager,
        instruction: "Using the file manager, move the file report.txt from your home folder (/home/user) into the folder docs (also in your home folder).",
        files: &[
            ("report.txt", "Q3 numbers are in.\n"),
            ("docs/index.txt", "documents\n"),
        ],
        launch: PCMANFM,
        checks: &[
            Check::FileMissing { path: "report.txt" },
            Check::FileEquals {
                path: "docs/report.txt",
                text: "Q3 numbers are in.",
            },
        ],
        demo: &[
            Wait(1000),
            Type("report"),
            Wait(300),
            Key("Escape"),
            Key("ctrl+x"),
            Wait(200),
            Type("docs"),
            Wait(300),
            Key("Return"),
            Wait(700),
            Key("ctrl+v"),
            Wait(1100),
        ],
    },
    DesktopTask {
        id: "desktop-test-009",
        split: Split::Test,
        app: App::FileManager,
        instruction: "Using the file manager, put a copy of the file photo-list.txt (in your home folder, /home/user) into the folder backup (also in your home folder). The original must stay where it is.",
        files: &[
            ("photo-list.txt", "beach.jpg\nharbour.jpg\nmarket.jpg\n"),
            ("backup/old.txt", "older backup\n"),
        ],
        launch: PCMANFM,
        checks: &[
            Check::FileEquals {
                path: "backup/photo-list.txt",
                text: "beach.jpg\nharbour.jpg\nmarket.jpg",
            },
            Check::FileEquals {
                path: "photo-list.txt",
                text: "beach.jpg\nharbour.jpg\nmarket.jpg",
            },
        ],
        demo: &[
            Wait(1000),
            Type("photo"),
            Wait(300),
            Key("Escape"),
            Key("ctrl+c"),
            Wait(200),
            Type("backup"),
            Wait(300),
            Key("Return"),
            Wait(700),
            Key("ctrl+v"),
            Wait(1100),
        ],
    },
    DesktopTask {
        id: "desktop-train-023",
        split: Split::Train,
        app: App::FileManager,
        instruction: "Using the file manager, create a folder named 2026 inside the folder projects in your home folder (/home/user).",
        files: &[("projects/plan.txt", "roadmap\n")],
        launch: PCMANFM,
        checks: &[Check::DirExists {
            path: "projects/2026",
        }],
        demo: &[
            Wait(1000),
            Type("projects"),
            Wait(300),
            Key("Return"),
            Wait(700),
            Key("ctrl+shift+n"),
            Wait(700),
            Type("2026"),
            Wait(200),
            Key("Return"),
            Wait(1000),
        ],
    },
    // ---------------------------------------------------------------- two applications
    DesktopTask {
        id: "desktop-train-024",
        split: Split::Train,
        app: App::TextEditor,
        instruction: "Compute 46 × 89 (the calculator is open), then use the text editor to save a file result.txt in your home folder (/home/user) whose only line is the result, digits only.",
        files: &[],
        launch: &[&["galculator"], &["mousepad"]],
        checks: &[Check::FileEquals {
            path: "result.txt",
            text: "4094",
        }],
        demo: &[
            // The editor, launched last, has the focus.
            Wait(1000),
            Type("4094"),
            Key("ctrl+s"),
            Wait(900),
            Type("result.txt"),
            Wait(400),
            Key("Return"),
            Wait(1000),
        ],
    },
];

/// Every built-in task, train and test interleaved, in a stable order.
pub fn catalog() -> &'static [DesktopTask] {
    CATALOG
}

/// A task by id.
pub fn task(id: &str) -> Option<&'static DesktopTask> {
    CATALOG.iter().find(|t| t.id == id)
}

/// The ids by split, in catalog order, for [`mcpgym_env::Environment::tasks`].
pub fn task_set() -> TaskSet {
    let ids = |split: Split| {
        CATALOG
            .iter()
            .filter(|t| t.split == split)
            .map(|t| t.id.to_owned())
            .collect::<Vec<_>>()
    };
    TaskSet::new(ids(Split::Train), ids(Split::Test))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::grading::validate_relative_path;

    #[test]
    fn catalog_is_large_unique_and_numbered_by_split() {
        let tasks = catalog();
        assert!(tasks.len() >= 24, "{}", tasks.len());
        let ids: HashSet<&str> = tasks.iter().map(|t| t.id).collect();
        assert_eq!(ids.len(), tasks.len(), "duplicate ids");
        let set = task_set();
        let (train, test) = (set.ids(Split::Train), set.ids(Split::Test));
        assert_eq!(train.len() + test.len(), tasks.len());
        for (split, ids) in [(Split::Train, train), (Split::Test, test)] {
            for (n, id) in ids.iter().enumerate() {
                assert_eq!(*id, format!("desktop-{split}-{n:03}"));
                assert_eq!(task(id).unwrap().split, split);
            }
        }
        // About a third held out.
        let share = test.len() as f64 / tasks.len() as f64;
        assert!((0.25..=0.4).contains(&share), "{share}");
        assert!(task("desktop-nope").is_none());
    }

    #[test]
    fn both_splits_cover_several_apps() {
        for split in [Split::Train, Split::Test] {
            let apps: HashSet<App> = catalog()
                .iter()
                .filter(|t| t.split == split)
                .map(|t| t.app)
                .collect();
            assert!(apps.len() >= 3, "{split}: {apps:?}");
            let programs: HashSet<&str> = catalog()
                .iter()
                .filter(|t| t.split == split)
                .flat_map(DesktopTask::programs)
                .collect();
            assert!(programs.len() >= 3, "{split}: {programs:?}");
        }
        // Most tasks need a GUI application, not only the terminal.
        let gui = catalog().iter().filter(|t| t.app != App::Terminal).count();
        assert!(gui * 2 > catalog().len(), "{gui}");
    }

    #[test]
    fn paths_are_relative_and_inside_home() {
        for t in catalog() {
            for (path, _) in t.files {
                validate_relative_path(path).unwrap_or_else(|e| panic!("{}: {e}", t.id));
            }
            for check in t.checks {
                for path in check.paths() {
                    validate_relative_path(path).unwrap_or_else(|e| panic!("{}: {e}", t.id));
                }
            }
            let files: HashSet<&str> = t.files.iter().map(|(p, _)| *p).collect();
            assert_eq!(
                files.len(),
                t.files.len(),
                "{}: a file is written twice",
                t.id
            );
            // Launch arguments that are paths point into home.
            for argv in t.launch {
                assert!(!argv.is_empty(), "{}: empty argv", t.id);
                for arg in &argv[1..] {
                    assert!(
                        *arg == HOME || !arg.starts_with('/') && !arg.contains(".."),
                        "{}: {arg}",
                        t.id
                    );
                }
            }
        }
    }

    #[test]
    fn every_task_has_checks_a_demo_and_a_clear_instruction() {
        let known = ["xterm", "mousepad", "gnumeric", "galculator", "pcmanfm"];
        for t in catalog() {
            assert!(!t.checks.is_empty(), "{}: no checks", t.id);
            assert!(!t.demo.is_empty(), "{}: no demo", t.id);
            assert!(!t.launch.is_empty(), "{}: nothing launched", t.id);
            assert!(t.instruction.len() > 30, "{}", t.id);
            for program in t.programs() {
                assert!(known.contains(&program), "{}: {program}", t.id);
            }
            // Demos stay short: the tests that play them run every task.
            let waited: u32 = t
                .demo
                .iter()
                .map(|s| match s {
                    DemoStep::Wait(ms) => *ms,
                    DemoStep::Type(text) => 12 * text.chars().count() as u32,
                    DemoStep::Key(_) => 12,
                })
                .sum();
            assert!(waited < 6000, "{}: demo takes {waited} ms", t.id);
            for step in t.demo {
                match step {
                    DemoStep::Type(text) => {
                        assert!(!text.contains('\n'), "{}: newline in Type", t.id)
                    }
                    DemoStep::Key(key) => {
                        assert!(!key.is_empty() && !key.contains(' '), "{}: {key:?}", t.id)
                    }
                    DemoStep::Wait(ms) => assert!(*ms <= 3000, "{}", t.id),
                }
            }
        }
    }

    #[test]
    fn instructions_name_the_files_they_ask_for() {
        // A check on a file the instruction never mentions would grade something the agent
        // could not know to produce.
        for t in catalog() {
            for check in t.checks {
                for path in check.paths() {
                    let name = path.rsplit('/').next().unwrap();
                    assert!(
                        t.instruction.contains(name)
                            || t.files
                                .iter()
                                .any(|(p, _)| p.rsplit('/').next() == Some(name)),
                        "{}: {path} is not named in the instruction",
                        t.id
                    );
                }
            }
        }
    }

    #[test]
    fn calculator_answers_are_not_in_the_instructions() {
        for t in catalog() {
            for check in t.checks {
                if let Check::ClipboardNumber { value, .. } = check {
                    assert!(!t.instruction.contains(&value.to_string()), "{}", t.id);
                }
            }
        }
    }
}
