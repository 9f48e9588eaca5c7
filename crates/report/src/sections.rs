//! The report page, section by section: what each section shows and says, in page order
//! ([`Page`]'s methods, called by [`super::write`]); the pictures are only described here
//! (as jobs of the [`Builder`]) and drawn afterwards, in parallel.

use super::*;

/// What every section of the page reads: the sweep, the grid points picked with `--points`
/// (if any), whether any point has statistics yet, and the unnamed gate.
pub(super) struct Page<'s> {
    pub(super) s: &'s Sweep,
    pub(super) picked: Option<Vec<usize>>,
    pub(super) have_stats: bool,
    pub(super) primary: Option<usize>,
}

/// The grid points that get caves on the page, and the caves picked for them.
pub(super) struct Chosen {
    /// The best points by the unnamed gate, best first.
    top: Vec<usize>,
    /// The points whose typical cave is shown.
    thumbs: Vec<usize>,
    /// The points with a passing and a failing cave side by side.
    pairs: Vec<usize>,
    pub(super) picks: Vec<PointPicks>,
}

impl Chosen {
    fn pick(&self, p: usize) -> &PointPicks {
        self.picks
            .iter()
            .find(|x| x.point == p)
            .expect("picked point")
    }
}

impl Page<'_> {
    /// The points picked with `--points`, else `cap` points spread over the grid.
    fn shown(&self, cap: usize) -> Vec<usize> {
        self.picked.clone().unwrap_or_else(|| spread(self.s, cap))
    }

    /// "n of the N grid points, ..." for a section that shows some of them.
    fn spread_text(&self, n: usize) -> String {
        format!(
            "{n} of the {} grid points, {}",
            self.s.points.len(),
            if self.picked.is_some() {
                "as picked with `--points`"
            } else {
                "spread over the grid (pick others with `--points`)"
            }
        )
    }

    /// The title, what was swept, the command that made it, and a notice if it is unfinished.
    pub(super) fn heading(&self, b: &mut Builder) {
        let s = self.s;
        b.push(Block::Title(format!("Sweep report: {}", s.recipe.name)));
        let varied = if s.axes.is_empty() {
            "no key varied (one grid point)".to_string()
        } else {
            s.axes
                .iter()
                .map(|a| {
                    let n = a.values.len();
                    format!(
                        "`{}` ({n} value{}: {})",
                        a.key,
                        if n == 1 { "" } else { "s" },
                        values_label(a)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut gates_text = if s.gate.trim().is_empty() {
            "no gate".to_string()
        } else {
            format!("gate `{}`", s.gate.trim())
        };
        let named: Vec<String> = s
            .gates
            .iter()
            .filter_map(|g| g.name.as_ref().map(|n| format!("`{n}`")))
            .collect();
        if !named.is_empty() {
            gates_text.push_str(&format!("; named gates {}", named.join(", ")));
        }
        b.push(Block::Para(format!(
            "Sweep folder `{}`: {} grid point{} x {} seeds (`{}..{}`) = {} caves of `{}` ({}x{} cells, {} RNG). Varied: {}. {}.",
            s.dir.display(),
            s.points.len(),
            if s.points.len() == 1 { "" } else { "s" },
            s.n_seeds(),
            s.seeds.start,
            s.seeds.end,
            s.points.len() as u64 * s.n_seeds(),
            s.recipe.name,
            s.recipe.rows,
            s.recipe.cols,
            s.recipe.rng,
            varied,
            capitalise(&gates_text),
        )));
        if let Some(c) = &s.command {
            b.push(Block::Code(c.clone()));
        }
        if let Some(n) = notice(s) {
            b.push(Block::Notice(n));
        }
    }

    /// Which grid points get caves: the best by the gate, a spread (or the picked ones) for the
    /// typical caves, and points where some caves pass and some fail; then their caves.
    pub(super) fn choose(&self, top_n: usize) -> Result<Chosen, ReportError> {
        let s = self.s;
        let picked = &self.picked;
        let have_stats = self.have_stats;
        let primary = self.primary;
        let shown = |cap: usize| self.shown(cap);
        let mut top: Vec<usize> = Vec::new();
        if let Some(g) = primary.filter(|_| have_stats && top_n > 0 && s.points.len() > 1) {
            top = (0..s.points.len())
                .filter(|&p| s.points[p].summary.is_some())
                .collect();
            let rate = |p| Quantity::Gate(g).value(s, p);
            top.sort_by(|&x, &y| rate(y).total_cmp(&rate(x)).then(x.cmp(&y)));
            top.truncate(top_n);
        }
        let thumbs = shown(MAX_THUMBS);
        let pairs: Vec<usize> = match (primary, &picked) {
            (None, _) => Vec::new(),
            (Some(_), Some(p)) => p.clone(),
            (Some(g), None) => {
                // Points where some caves pass and some fail, evenly spaced; else a spread.
                let mixed: Vec<usize> = (0..s.points.len())
                    .filter(|&p| {
                        let r = Quantity::Gate(g).value(s, p);
                        r > 0.0 && r < 1.0
                    })
                    .collect();
                if mixed.is_empty() {
                    spread(s, MAX_PAIRS)
                } else {
                    evenly(&mixed, MAX_PAIRS)
                }
            }
        };
        let wanted: Vec<usize> = thumbs
            .iter()
            .chain(&pairs)
            .chain(&top)
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let rows = if s.per_seed != "none"
            && (s.found.contains(&"seeds.csv") || s.found.contains(&"seeds.parquet"))
        {
            model::seed_rows(s, &wanted, MAX_SEEDS_CSV)?
        } else {
            None
        };
        let picks: Vec<PointPicks> = caves::pick(s, &wanted, rows.as_ref())?;
        Ok(Chosen {
            top,
            thumbs,
            pairs,
            picks,
        })
    }

    /// The best grid points by the gate, with the command that reruns a cave of each.
    pub(super) fn best_points(&self, ch: &Chosen, b: &mut Builder) {
        let s = self.s;
        let have_stats = self.have_stats;
        let primary = self.primary;
        let top = &ch.top;
        let pick_of = |p: usize| ch.pick(p);
        if let Some(g) = primary.filter(|_| !top.is_empty()) {
            b.push(Block::Heading("Best grid points".into()));
            b.push(Block::Para(format!(
                "The {} grid points with the highest {}, ties in grid order. Each command re-runs one of the point's caves, the passing one nearest the point's median final wall fraction where known (else the typical one); run it from the report folder (`recipe.toml` is the sweep's recipe).",
                top.len(),
                s.gates[g].label(),
            )));
            let cmd = |p: usize| {
                let pk = pick_of(p);
                rerun_command(s, p, pk.passing.unwrap_or(pk.typical).seed)
            };
            let brief: Vec<usize> = ["wall_fraction", "components"]
                .iter()
                .filter_map(|m| s.metric(m))
                .collect();
            b.push(points_table(s, top, &brief, Some(&cmd)));
        } else if have_stats && primary.is_none() {
            b.push(Block::Para(
                "The sweep has no gate, so there are no pass rates to rank grid points by (give `cavesweep sweep` a `--gate`).".into(),
            ));
        }
    }

    /// The pass rates and metrics over the grid: a table (one point), line charts (one axis) or
    /// heatmaps (two or more).
    pub(super) fn grid(&self, ch: &Chosen, b: &mut Builder) {
        let s = self.s;
        let have_stats = self.have_stats;
        let pick_of = |p: usize| ch.pick(p);
        let qs = quantities(s);
        if have_stats && !qs.is_empty() {
            match s.axes.len() {
                0 => {
                    b.push(Block::Heading("Metrics".into()));
                    b.push(Block::Para(
                        "From `summary.csv`: pass rates in percent, statistics over the caves to 4 significant digits.".into(),
                    ));
                    b.push(one_point_table(s));
                    let pk = pick_of(0);
                    let (what, c) = match pk.passing {
                        Some(c) => ("a passing cave", c),
                        None => ("the typical cave", pk.typical),
                    };
                    b.push(Block::Para(format!(
                        "Re-run {what} (from the report folder; `recipe.toml` is the sweep's recipe): `{}`",
                        rerun_command(s, 0, c.seed)
                    )));
                }
                1 => {
                    b.push(Block::Heading(format!(
                        "Pass rates and metrics over `{}`",
                        s.axes[0].key
                    )));
                    b.push(Block::Para(
                        "Lines: the mean per value; shaded bands: p05 to p95 of the caves (pass rates have no band). A gap: no statistics for that value yet.".into(),
                    ));
                    let mut figs = Vec::new();
                    let gates: Vec<Quantity> = qs
                        .iter()
                        .copied()
                        .filter(|q| matches!(q, Quantity::Gate(_)))
                        .collect();
                    if !gates.is_empty() {
                        figs.push(b.job(
                            "img/lines-pass-rate.png".into(),
                            Job::Lines(line_chart(s, &gates, "Pass rates")),
                            "pass rates".into(),
                            None,
                        ));
                    }
                    for q in qs.iter().filter(|q| matches!(q, Quantity::Metric(_))) {
                        figs.push(b.job(
                            format!("img/lines-{}.png", q.slug(s)),
                            Job::Lines(line_chart(s, &[*q], &q.title(s))),
                            q.title(s),
                            None,
                        ));
                    }
                    b.items.push(Item::Strip(figs));
                }
                _ => {
                    let further = &s.axes[2..];
                    let panels: usize = further.iter().map(|a| a.values.len()).product();
                    b.push(Block::Heading(format!(
                        "Pass rates and metrics over `{}` x `{}`",
                        s.axes[0].key, s.axes[1].key
                    )));
                    let mut para = format!(
                        "One heatmap per quantity: `{}` across, `{}` up. Pass rates are coloured on the viridis scale fixed at 0 to 100%, metric means on the cividis scale from their lowest to their highest value (both read well with colour-blindness and in grey). A cell shows its value where it is large enough; grey cells have no statistics.",
                        s.axes[0].key, s.axes[1].key
                    );
                    if !further.is_empty() {
                        let keys: Vec<String> =
                            further.iter().map(|a| format!("`{}`", a.key)).collect();
                        para.push_str(&format!(
                            " One panel per value of {}{}.",
                            keys.join(" x "),
                            if panels > MAX_PANELS {
                                format!(" (the first {MAX_PANELS} of {panels})")
                            } else {
                                String::new()
                            }
                        ));
                    }
                    b.push(Block::Para(para));
                    let figs = qs
                        .iter()
                        .map(|q| {
                            b.job(
                                format!("img/heat-{}.png", q.slug(s)),
                                Job::Heat(heatmap(s, *q)),
                                q.title(s),
                                None,
                            )
                        })
                        .collect();
                    b.items.push(Item::Strip(figs));
                }
            }
        }
    }

    /// The wall fraction per step, of the longest runs.
    pub(super) fn trajectories(&self, b: &mut Builder) {
        let s = self.s;
        let picked = &self.picked;
        let spread_text = |n: usize| self.spread_text(n);
        // The trajectory of `steps=k` is the start of `steps=max`'s: show the longest only.
        let steps_axis = s.axes.iter().position(|a| a.key == "steps");
        let traj_points: Vec<usize> = picked
            .clone()
            .unwrap_or_else(|| spread_pinned(s, MAX_LINES, steps_axis))
            .into_iter()
            .filter(|&p| !s.points[p].trajectory.is_empty())
            .collect();
        if !traj_points.is_empty() {
            b.push(Block::Heading("Wall fraction per step".into()));
            let of = if traj_points.len() < s.points.len() {
                let mut t = spread_text(traj_points.len());
                if picked.is_none()
                    && let Some(a) = steps_axis
                {
                    t.push_str(&format!(
                        ", at the largest `steps` ({}): a shorter run's trajectory is the start of it",
                        s.axes[a].values.last().expect("axis values")
                    ));
                }
                t
            } else if s.points.len() == 1 {
                "the one grid point".into()
            } else {
                format!("every grid point ({})", s.points.len())
            };
            b.push(Block::Para(format!(
                "Step 0 is the fill, then each pass application, then each post-step. Lines: the mean over the caves; bands: p05 to p95. Shown: {of}."
            )));
            let fig = b.job(
                "img/trajectory.png".into(),
                Job::Lines(trajectory_chart(s, &traj_points)),
                "wall fraction per step".into(),
                None,
            );
            b.items.push(Item::Image(fig));
        }
    }

    /// Histograms of the component count.
    pub(super) fn components(&self, b: &mut Builder) {
        let s = self.s;
        let shown = |cap: usize| self.shown(cap);
        let spread_text = |n: usize| self.spread_text(n);
        let hist_points: Vec<usize> = shown(MAX_HISTOGRAMS)
            .into_iter()
            .filter(|&p| !s.points[p].components.is_empty())
            .collect();
        if !hist_points.is_empty() {
            b.push(Block::Heading("Component counts".into()));
            b.push(Block::Para(format!(
                "The share of caves per number of floor components (`components.csv`): {}.",
                if hist_points.len() < s.points.len() {
                    spread_text(hist_points.len())
                } else {
                    "every grid point".into()
                }
            )));
            let fig = b.job(
                "img/components.png".into(),
                Job::Hist(Histograms {
                    title: "Floor components per cave".into(),
                    panels: hist_points
                        .iter()
                        .map(|&p| (short_label(s, p), s.points[p].components.clone()))
                        .collect(),
                }),
                "component-count histograms".into(),
                None,
            );
            b.items.push(Item::Image(fig));
        }
    }

    /// The cave pictures: typical caves, then passing and failing pairs.
    pub(super) fn caves(&self, ch: &Chosen, b: &mut Builder) {
        let s = self.s;
        let picked = &self.picked;
        let have_stats = self.have_stats;
        let primary = self.primary;
        let thumbs = &ch.thumbs;
        let pairs = &ch.pairs;
        let picks = &ch.picks;
        let pick_of = |p: usize| ch.pick(p);
        let spread_text = |n: usize| self.spread_text(n);
        b.push(Block::Heading("Caves".into()));
        let exact = picks.iter().any(|p| p.exact);
        let side = s.recipe.rows.max(s.recipe.cols);
        let downsampled = if side > caves::MAX_THUMB_SIDE {
            let k = side.div_ceil(caves::MAX_THUMB_SIDE);
            format!(
                " These caves are too big to show cell by cell: each pixel is the average colour of a {k}x{k} block of cells."
            )
        } else {
            String::new()
        };
        b.push(Block::Para(format!(
            "Walls dark, floor the spawn reaches light, floor it cannot reach blue; green ring: the spawn, orange diamond: the exit (the cell shows inside). Every picture is regenerated from the recipe.{downsampled} A point's typical cave is the seed whose final wall fraction is nearest the point's median ({}; ties: the lowest seed). `caves.csv` lists them.",
            if exact {
                "over every seed in `seeds.csv`"
            } else if have_stats {
                "the sweep's p50, among the first 256 seeds"
            } else {
                "the median of the first 256 seeds"
            }
        )));
        let cave_fig = |b: &mut Builder, p: usize, role: Role, c: caves::Pick| {
            let label = if s.axes.is_empty() {
                String::new()
            } else {
                format!("{}: ", s.point_label(p))
            };
            b.job(
                format!("img/cave-{p}-{}.png", role.name()),
                Job::Cave(p, c.seed),
                format!("{label}{} cave, seed {}", role.name(), c.seed),
                Some(format!(
                    "{label}{} seed {}, wall fraction {}",
                    role.name(),
                    c.seed,
                    sig4(c.wall)
                )),
            )
        };
        b.push(Block::Subheading("Typical caves".into()));
        if thumbs.len() < s.points.len() {
            b.push(Block::Para(format!(
                "{}.",
                capitalise(&spread_text(thumbs.len()))
            )));
        }
        let figs = thumbs
            .iter()
            .map(|&p| cave_fig(b, p, Role::Typical, pick_of(p).typical))
            .collect();
        b.items.push(Item::Strip(figs));
        let mut figs = Vec::new();
        for &p in pairs {
            let pk = pick_of(p);
            if let (Some(a), Some(f)) = (pk.passing, pk.failing) {
                figs.push(cave_fig(b, p, Role::Passing, a));
                figs.push(cave_fig(b, p, Role::Failing, f));
            }
        }
        if !figs.is_empty() {
            let g = primary.expect("pairs need a gate");
            b.push(Block::Subheading("A passing and a failing cave".into()));
            b.push(Block::Para(format!(
                "Per grid point, the passing and the failing cave nearest the median, by the gate {}{}.",
                match &s.gates[g].name {
                    None => format!("`{}`", s.gate.trim()),
                    Some(n) => format!("`{n}`"),
                },
                if picked.is_some() {
                    "; the points picked with `--points`".to_string()
                } else if pairs.len() < s.points.len() {
                    format!(
                        "; {} of the {} grid points where some caves pass and some fail",
                        pairs.len(),
                        s.points.len()
                    )
                } else {
                    String::new()
                }
            )));
            b.items.push(Item::Strip(figs));
        }
    }

    /// The table of every grid point (when the grid is small enough).
    pub(super) fn every_point(&self, b: &mut Builder) {
        let s = self.s;
        let have_stats = self.have_stats;
        if have_stats && s.points.len() > 1 && s.points.len() <= MAX_TABLE_POINTS {
            b.push(Block::Heading("Every grid point".into()));
            b.push(Block::Para(
                "From `summary.csv`: pass rates in percent, means to 4 significant digits.".into(),
            ));
            let all: Vec<usize> = (0..s.points.len()).collect();
            let metrics: Vec<usize> = (0..s.metrics.len()).collect();
            b.push(points_table(s, &all, &metrics, None));
        }
    }

    /// The sweep's files and this report's.
    pub(super) fn files(&self, b: &mut Builder) {
        let s = self.s;
        b.push(Block::Heading("Files".into()));
        let found: Vec<String> = std::iter::once("manifest.json")
            .chain(s.found.iter().copied())
            .map(|f| format!("`{f}`"))
            .collect();
        b.push(Block::Para(format!(
            "The sweep's files, in `{}`: {}. This report: `index.html`, `README.md` (the same content), `recipe.toml` (the sweep's recipe), `caves.csv` (the caves pictured and chosen), `img/`. Made by cavesweep {}.",
            s.dir.display(),
            found.join(", "),
            env!("CARGO_PKG_VERSION")
        )));
    }
}
