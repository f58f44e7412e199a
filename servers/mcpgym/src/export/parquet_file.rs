//! Task rows as a Parquet file, written column by column with the `parquet` crate's low-level
//! writer (no Arrow, no compression codec: dictionary encoding already folds the prompts'
//! repeated instructions). The schema nests as the rows do, so Arrow readers (`pyarrow`,
//! `datasets`) load `prompt` as a list of `{role, content}` structs and `extra_info` and
//! `reward_model` as structs, the same values the JSON Lines file holds.

use std::io::Write;
use std::sync::Arc;

use anyhow::Context;
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::types::{Type, TypePtr};

use crate::export::Progress;
use crate::export::tasks::{Message, Rows, StartArgs, TaskRow};

/// Rows per row group: bounds the memory a large export holds at once.
const ROW_GROUP: usize = 10_000;

/// Writes `rows` as Parquet to `output`; gives the output back to be finished.
pub fn write<W: Write + Send>(
    output: W,
    rows: &Rows,
    progress: &mut Progress,
) -> anyhow::Result<W> {
    let mut rows = rows.iter().peekable();
    let tools: Vec<String> = rows
        .peek()
        .map(|row| row.extra_info.tools_kwargs.keys().cloned().collect())
        .unwrap_or_default();
    anyhow::ensure!(
        !tools.is_empty(),
        "the environment has no tools, so verl's tools_kwargs would be an empty struct, which Parquet cannot hold; use --format jsonl"
    );
    let properties = Arc::new(
        WriterProperties::builder()
            .set_created_by(format!("mcpgym {}", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let mut writer = SerializedFileWriter::new(output, schema(&tools)?, properties)?;
    let mut group = Vec::with_capacity(ROW_GROUP);
    loop {
        group.clear();
        group.extend(rows.by_ref().take(ROW_GROUP));
        if group.is_empty() {
            break;
        }
        let mut row_group = writer.next_row_group()?;
        write_group(&mut row_group, &group, &tools)?;
        row_group.close()?;
        group.iter().for_each(|_| progress.tick());
    }
    Ok(writer.into_inner()?)
}

fn string(name: &str, repetition: Repetition) -> anyhow::Result<TypePtr> {
    Ok(Arc::new(
        Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
            .with_repetition(repetition)
            .with_logical_type(Some(LogicalType::String))
            .build()?,
    ))
}

fn int64(name: &str) -> anyhow::Result<TypePtr> {
    Ok(Arc::new(
        Type::primitive_type_builder(name, Physical::INT64)
            .with_repetition(Repetition::REQUIRED)
            .build()?,
    ))
}

fn group(name: &str, repetition: Repetition, fields: Vec<TypePtr>) -> anyhow::Result<TypePtr> {
    Ok(Arc::new(
        Type::group_type_builder(name)
            .with_repetition(repetition)
            .with_fields(fields)
            .build()?,
    ))
}

/// The file's schema, with one `tools_kwargs` field per tool. Its leaves, depth first, are the
/// columns [`write_group`] writes, in the same order.
fn schema(tools: &[String]) -> anyhow::Result<TypePtr> {
    const REQUIRED: Repetition = Repetition::REQUIRED;
    const REPEATED: Repetition = Repetition::REPEATED;
    const OPTIONAL: Repetition = Repetition::OPTIONAL;
    let required = |name: &str| string(name, REQUIRED);
    // The three-level LIST layout Arrow reads as list<struct<role, content>>.
    let message = group(
        "element",
        REQUIRED,
        vec![required("role")?, required("content")?],
    )?;
    let prompt = Arc::new(
        Type::group_type_builder("prompt")
            .with_repetition(REQUIRED)
            .with_logical_type(Some(LogicalType::List))
            .with_fields(vec![group("list", REPEATED, vec![message])?])
            .build()?,
    );
    let start = || -> anyhow::Result<TypePtr> {
        group(
            "create_kwargs",
            REQUIRED,
            vec![required("task")?, int64("seed")?, required("split")?],
        )
    };
    let tools_kwargs = tools
        .iter()
        .map(|tool| group(tool, REQUIRED, vec![start()?]))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let fields = vec![
        required("data_source")?,
        prompt,
        required("ability")?,
        group(
            "reward_model",
            REQUIRED,
            vec![required("style")?, required("ground_truth")?],
        )?,
        required("env_class")?,
        required("env")?,
        required("task")?,
        int64("seed")?,
        required("split")?,
        group(
            "extra_info",
            REQUIRED,
            vec![
                required("env")?,
                required("task")?,
                int64("seed")?,
                required("split")?,
                int64("index")?,
                string("family", OPTIONAL)?,
                group("tools_kwargs", REQUIRED, tools_kwargs)?,
            ],
        )?,
    ];
    Ok(Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?,
    ))
}

/// Writes one row group: every leaf column of [`schema`], in order.
fn write_group<W: Write + Send>(
    writer: &mut SerializedRowGroupWriter<'_, W>,
    rows: &[TaskRow],
    tools: &[String],
) -> anyhow::Result<()> {
    let mut columns = Columns { writer };
    let text = |f: fn(&TaskRow) -> &str| rows.iter().map(|r| f(r).into()).collect::<Vec<_>>();
    let number = |f: fn(&TaskRow) -> u64| rows.iter().map(|r| f(r) as i64).collect::<Vec<_>>();
    columns.strings(&text(|r| &r.data_source), None)?;
    // The prompt's messages: repetition level 0 starts a row's list, 1 goes on with it.
    let levels = |row: &TaskRow| (0..row.prompt.len()).map(|i| i16::from(i > 0));
    let rep: Vec<i16> = rows.iter().flat_map(levels).collect();
    let def = vec![1; rep.len()];
    let fields: [fn(&Message) -> &str; 2] = [|m| m.role, |m| &m.content];
    for field in fields {
        let values: Vec<ByteArray> = rows
            .iter()
            .flat_map(|r| r.prompt.iter().map(|m| field(m).into()))
            .collect();
        columns.strings(&values, Some((&def, &rep)))?;
    }
    columns.strings(&text(|r| &r.ability), None)?;
    columns.strings(&text(|r| r.reward_model.style), None)?;
    columns.strings(&text(|r| &r.reward_model.ground_truth), None)?;
    columns.strings(&text(|r| r.env_class), None)?;
    columns.strings(&text(|r| &r.env), None)?;
    columns.strings(&text(|r| &r.task), None)?;
    columns.numbers(&number(|r| r.seed))?;
    columns.strings(&text(|r| r.split), None)?;
    columns.strings(&text(|r| &r.extra_info.env), None)?;
    columns.strings(&text(|r| &r.extra_info.task), None)?;
    columns.numbers(&number(|r| r.extra_info.seed))?;
    columns.strings(&text(|r| r.extra_info.split), None)?;
    columns.numbers(&number(|r| r.extra_info.index))?;
    // Only present families are values; a listed task's is null (definition level 0).
    let families: Vec<ByteArray> = rows
        .iter()
        .filter_map(|r| r.extra_info.family.as_deref().map(ByteArray::from))
        .collect();
    let defined: Vec<i16> = rows
        .iter()
        .map(|r| i16::from(r.extra_info.family.is_some()))
        .collect();
    columns.optional_strings(&families, &defined)?;
    for tool in tools {
        let start = |r: &TaskRow| -> anyhow::Result<StartArgs> {
            r.extra_info
                .tools_kwargs
                .get(tool)
                .map(|kwargs| kwargs.create_kwargs.clone())
                .context("every row of an export has the same tools")
        };
        let starts = rows.iter().map(start).collect::<anyhow::Result<Vec<_>>>()?;
        let tasks: Vec<ByteArray> = starts.iter().map(|s| s.task.as_str().into()).collect();
        columns.strings(&tasks, None)?;
        let seeds: Vec<i64> = starts.iter().map(|s| s.seed as i64).collect();
        columns.numbers(&seeds)?;
        let splits: Vec<ByteArray> = starts.iter().map(|s| s.split.into()).collect();
        columns.strings(&splits, None)?;
    }
    anyhow::ensure!(
        columns.writer.next_column()?.is_none(),
        "the Parquet schema has more columns than were written"
    );
    Ok(())
}

/// The next columns of a row group.
struct Columns<'g, 'w, W: Write + Send> {
    writer: &'g mut SerializedRowGroupWriter<'w, W>,
}

impl<W: Write + Send> Columns<'_, '_, W> {
    fn next(&mut self) -> anyhow::Result<parquet::file::writer::SerializedColumnWriter<'_>> {
        self.writer
            .next_column()?
            .context("the Parquet schema has fewer columns than are written")
    }

    /// A string column; `levels` (definition, repetition) for one inside the prompt's list.
    fn strings(
        &mut self,
        values: &[ByteArray],
        levels: Option<(&[i16], &[i16])>,
    ) -> anyhow::Result<()> {
        let mut column = self.next()?;
        column.typed::<ByteArrayType>().write_batch(
            values,
            levels.map(|(def, _)| def),
            levels.map(|(_, rep)| rep),
        )?;
        Ok(column.close()?)
    }

    /// An optional string column: `defined` has one level per row, 1 where it has a value.
    fn optional_strings(&mut self, values: &[ByteArray], defined: &[i16]) -> anyhow::Result<()> {
        let mut column = self.next()?;
        column
            .typed::<ByteArrayType>()
            .write_batch(values, Some(defined), None)?;
        Ok(column.close()?)
    }

    fn numbers(&mut self, values: &[i64]) -> anyhow::Result<()> {
        let mut column = self.next()?;
        column
            .typed::<Int64Type>()
            .write_batch(values, None, None)?;
        Ok(column.close()?)
    }
}
