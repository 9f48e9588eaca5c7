//! The files of each returned match: its picture (`--png-dir`) and its map files
//! (`--save-dir`), written as the match's chunk finishes or, for `--limit` and `--top`, at the
//! end; on a resume the files a returned row lacks are made again. A file is the same bytes
//! whichever run writes it.

use std::path::{Path, PathBuf};

use cavesweep_core::generate::Generator;
use cavesweep_core::grid::Grid;
use cavesweep_core::measure::{EMPTY_VALUES, MeasureConfig, Measurer, Metric, MetricSet};

use super::{Search, SearchError};
use crate::mapfile::{self, Format, MapInfo};
use crate::render;

/// Map files of the matches ([`crate::mapfile`]): `SEED.EXT` per returned match and format,
/// with the recipe, seed, every metric, spawn and exit where the format has room, so a file
/// is the same bytes whichever run of a resumed search wrote it.
#[derive(Debug, Clone)]
pub struct SaveSpec {
    /// The folder the files go in.
    pub dir: PathBuf,
    /// The formats, each once.
    pub formats: Vec<Format>,
    /// Replace a file holding something else (`--force`). Without it a file is rewritten only
    /// when it holds exactly what this search writes, as on a resume.
    pub replace: bool,
}

/// Pictures of the matches.
#[derive(Debug, Clone)]
pub struct PngSpec {
    /// The folder the pictures go in, one `SEED.png` per returned match.
    pub dir: PathBuf,
    /// Pixels per cell.
    pub scale: usize,
    /// Replace a PNG holding another picture (`--force`). Without it a file named `SEED.png`
    /// is rewritten only when it holds exactly the picture this search makes, as on a resume.
    pub replace: bool,
}

impl Search {
    /// Whether each returned match gets files of its own (`png` or `save`).
    pub fn per_match(&self) -> bool {
        self.spec.png.is_some() || self.spec.save.is_some()
    }

    /// The files of one returned match: its picture and its map files.
    pub(super) fn write_match(
        &self,
        measurer: &mut Measurer,
        seed: u64,
        g: &Grid,
    ) -> Result<(), SearchError> {
        if let Some(png) = &self.spec.png {
            render::write_png(
                &png.dir.join(format!("{seed}.png")),
                g,
                png.scale,
                &render::Marks::of(&self.spec.recipe),
                png.replace,
            )?;
        }
        if let Some(save) = &self.spec.save {
            let r = &self.spec.recipe;
            let cfg = MeasureConfig {
                connectivity: r.connectivity,
                spawn: r.spawn_cell(),
                exit: r.exit_cell(),
                metrics: MetricSet::ALL,
            };
            let mut values = EMPTY_VALUES;
            measurer.measure(g, &cfg, &mut values);
            let metrics: Vec<(&str, f64)> = Metric::ALL
                .iter()
                .map(|m| (m.name(), values[m.index()]))
                .collect();
            let info = MapInfo {
                recipe: Some(r),
                seed: Some(seed),
                metrics: &metrics,
                spawn: Some(cfg.spawn),
                exit: cfg.exit,
            };
            let files: Vec<(PathBuf, Vec<u8>)> = save
                .formats
                .iter()
                .map(|&f| {
                    (
                        save.dir.join(format!("{seed}.{f}")),
                        mapfile::encode(f, g, &info),
                    )
                })
                .collect();
            mapfile::write_all(&files, save.replace)?;
        }
        Ok(())
    }

    /// The files `seed`'s match should have ([`Search::per_match`]).
    pub(super) fn match_files(&self, seed: u64) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(png) = &self.spec.png {
            out.push(png.dir.join(format!("{seed}.png")));
        }
        if let Some(save) = &self.spec.save {
            out.extend(
                save.formats
                    .iter()
                    .map(|f| save.dir.join(format!("{seed}.{f}"))),
            );
        }
        out
    }

    /// Create the folders of the matches' pictures and map files (and their parents), and the
    /// Tiled tileset picture the maps refer to. Done once everything that can refuse the
    /// search has been checked, so a refused search leaves no folder behind.
    pub fn create_match_dirs(&self) -> Result<(), SearchError> {
        let create = |dir: &Path, what: &str| {
            std::fs::create_dir_all(dir).map_err(|source| SearchError::Io {
                what: format!("cannot create the {what} folder {}", dir.display()),
                source,
            })
        };
        if let Some(png) = &self.spec.png {
            create(&png.dir, "PNG")?;
        }
        if let Some(save) = &self.spec.save {
            create(&save.dir, "map")?;
            if save.formats.iter().any(|f| f.needs_tiles()) {
                let tiles = save.dir.join(mapfile::TILES_PNG);
                mapfile::write_all(&[(tiles, mapfile::tiles_png())], save.replace)?;
            }
        }
        Ok(())
    }

    /// The files of `seeds` (rows an earlier run returned) that are missing from their folders
    /// (deleted, or `--png-dir` / `--save-dir` added on a rerun), regenerated.
    pub fn missing_match_files(&self, seeds: &[u64], threads: usize) -> Result<(), SearchError> {
        if !self.per_match() {
            return Ok(());
        }
        let missing: Vec<u64> = seeds
            .iter()
            .copied()
            .filter(|&s| self.match_files(s).iter().any(|f| !f.exists()))
            .collect();
        self.render_rows(&missing, threads)
    }

    /// The files of the matches `seeds`, regenerated (`--limit` and `--top` know their rows
    /// only at the end).
    pub(super) fn render_rows(&self, seeds: &[u64], threads: usize) -> Result<(), SearchError> {
        use rayon::prelude::*;
        let pool = crate::fanout::pool(threads)?;
        pool.install(|| {
            seeds.par_iter().try_for_each_init(
                || {
                    let g = Generator::new(&self.spec.recipe, MetricSet::EMPTY).expect("validated");
                    (g, Measurer::new())
                },
                |(g, m), &seed| {
                    let cave = g.run(seed).expect("recipe validated");
                    self.write_match(m, seed, cave.grid)
                },
            )
        })
    }
}
