//! A final table in the formats asked for: `NAME.csv`, `NAME.parquet` or both, fed the same CSV
//! rows. Each file is a [`Output`] (temporary sibling, no-follow, fsynced, renamed into
//! place, recorded by size and CRC-32), so the Parquet files get every guarantee the CSV files
//! have without a second write path.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;

use super::files::{FileRecord, Output};
use super::parquet::{Columns, ParquetTable};

/// Which files a table is written as (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `NAME.csv` only (the default, as before Parquet existed).
    #[default]
    Csv,
    /// `NAME.parquet` only.
    Parquet,
    /// Both, from the same rows.
    Both,
}

impl Format {
    /// Whether the CSV file is written.
    pub fn csv(self) -> bool {
        self != Format::Parquet
    }
    /// Whether the Parquet file is written.
    pub fn parquet(self) -> bool {
        self != Format::Csv
    }
    /// The file names of table `stem` in this format (`seeds` -> `seeds.csv`, `seeds.parquet`).
    pub fn names(self, stem: &str) -> Vec<String> {
        let mut v = Vec::new();
        if self.csv() {
            v.push(format!("{stem}.csv"));
        }
        if self.parquet() {
            v.push(format!("{stem}.parquet"));
        }
        v
    }
}

/// Not `csv`, `parquet` or `both` (the text given).
#[derive(Debug, Clone, thiserror::Error)]
#[error("format {0:?}: expected csv, parquet or both")]
pub struct FormatError(pub String);

impl FromStr for Format {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Format, FormatError> {
        match s {
            "csv" => Ok(Format::Csv),
            "parquet" => Ok(Format::Parquet),
            "both" => Ok(Format::Both),
            _ => Err(FormatError(s.into())),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Csv => "csv",
            Format::Parquet => "parquet",
            Format::Both => "both",
        })
    }
}

/// An I/O error and the name of the file it happened to.
pub type NamedError = (String, io::Error);

/// One table being written in one or both formats. Dropped unfinished, its temporaries go.
pub struct TableOut {
    csv: Option<(String, Output)>,
    parquet: Option<(String, ParquetTable<Output>)>,
}

impl TableOut {
    /// Start table `stem` in `dir`: the CSV with its `header` written, the Parquet file with
    /// `cols` (the header's columns, typed) and the key-value metadata `meta`.
    pub fn create(
        dir: &Path,
        stem: &str,
        format: Format,
        header: &[u8],
        cols: impl FnOnce() -> Columns,
        meta: &[(&str, String)],
    ) -> Result<TableOut, NamedError> {
        let csv = if format.csv() {
            let name = format!("{stem}.csv");
            let mut out = Output::create(dir, &name).map_err(|e| (name.clone(), e))?;
            out.write_all(header).map_err(|e| (name.clone(), e))?;
            Some((name, out))
        } else {
            None
        };
        let parquet = if format.parquet() {
            let name = format!("{stem}.parquet");
            let out = Output::create(dir, &name).map_err(|e| (name.clone(), e))?;
            let table = ParquetTable::new(out, &cols(), meta).map_err(|e| (name.clone(), e))?;
            Some((name, table))
        } else {
            None
        };
        Ok(TableOut { csv, parquet })
    }

    /// Append CSV rows (whole lines) to every file of the table.
    pub fn write_rows(&mut self, rows: &[u8]) -> Result<(), NamedError> {
        if let Some((name, out)) = &mut self.csv {
            out.write_all(rows).map_err(|e| (name.clone(), e))?;
        }
        if let Some((name, t)) = &mut self.parquet {
            t.write_csv(rows).map_err(|e| (name.clone(), e))?;
        }
        Ok(())
    }

    /// Finish every file (fsync, rename into place): their names and records, CSV first.
    pub fn finish(self) -> Result<Vec<(String, FileRecord)>, NamedError> {
        let mut done = Vec::new();
        if let Some((name, out)) = self.csv {
            let rec = out.finish().map_err(|e| (name.clone(), e))?;
            done.push((name, rec));
        }
        if let Some((name, t)) = self.parquet {
            let rec = t
                .finish()
                .and_then(Output::finish)
                .map_err(|e| (name.clone(), e))?;
            done.push((name, rec));
        }
        Ok(done)
    }
}
