//! The report's charts, drawn with `plotters` into an RGB buffer and encoded as PNG.
//!
//! Why plotters: it is the maintained, widely used Rust plotting crate, draws axes, ticks,
//! labels, legends and series for us, and renders into a plain pixel buffer with no system
//! libraries. Its `ab_glyph` text backend reads a font from bytes instead of looking for system
//! fonts (which a server or CI machine may lack), so DejaVu Sans is compiled in (the `dejavu`
//! crate) and every machine draws identical pictures. Colour maps are `colorous`' viridis and
//! cividis (exact ports of matplotlib's), perceptually uniform and readable with the common
//! colour-vision deficiencies; line colours are the Okabe-Ito palette.
//!
//! Every chart here takes plain numbers and strings; nothing knows about sweeps or CSV.

use std::sync::Once;

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

use super::canvas::Canvas;

/// A rendered picture.
#[derive(Debug, Clone)]
pub struct Png {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The encoded PNG file, ready to write.
    pub bytes: Vec<u8>,
}

const FONT: &str = "sans-serif";
/// Line colours for a few series: the Okabe-Ito palette, minus its yellow (too pale on white).
const LINES: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];
/// Cells without a value.
const NO_DATA: RGBColor = RGBColor(205, 205, 205);
const AXIS_GREY: RGBColor = RGBColor(90, 90, 90);

fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font compiled into the binary; failure is a bug.
        let ok = register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok();
        assert!(ok, "the bundled DejaVu Sans font does not load");
    });
}

/// Colour of the `k`-th of `n` series.
pub fn series_color(k: usize, n: usize) -> RGBColor {
    if n <= LINES.len() {
        LINES[k % LINES.len()]
    } else {
        let c = colorous::VIRIDIS.eval_continuous(0.9 * k as f64 / (n - 1).max(1) as f64);
        RGBColor(c.r, c.g, c.b)
    }
}

/// A sequential colour map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMap {
    /// Viridis (dark purple to yellow): pass rates, on a fixed 0..1 scale.
    Viridis,
    /// Cividis (dark blue to yellow): metric means, from their lowest to highest value.
    Cividis,
}

impl ColorMap {
    /// The map's lower-case name (`viridis`, `cividis`), as the page's text calls it.
    pub fn name(self) -> &'static str {
        match self {
            ColorMap::Viridis => "viridis",
            ColorMap::Cividis => "cividis",
        }
    }
    fn at(self, t: f64) -> RGBColor {
        let g = match self {
            ColorMap::Viridis => colorous::VIRIDIS,
            ColorMap::Cividis => colorous::CIVIDIS,
        };
        let c = g.eval_continuous(t.clamp(0.0, 1.0));
        RGBColor(c.r, c.g, c.b)
    }
}

type Area<'a> = DrawingArea<Canvas<'a>, Shift>;
type DrawResult = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Draw a `width x height` picture on a white background and encode it.
fn render(width: u32, height: u32, draw: impl FnOnce(&Area) -> DrawResult) -> Result<Png, String> {
    fonts();
    let mut buf = vec![255u8; width as usize * height as usize * 3];
    {
        let root = Canvas::new(&mut buf, (width, height)).into_drawing_area();
        draw(&root)?;
        root.present().map_err(err)?;
    }
    let bytes =
        cavesweep_engine::render::encode_png(width as usize, height as usize, &buf).map_err(err)?;
    Ok(Png {
        width,
        height,
        bytes,
    })
}

/// Approximate width in pixels of `s` at `size` px (DejaVu Sans averages ~0.6 em per glyph).
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// Shortest decimal for a tick or a cell: integers plainly, fractions with 3 significant digits.
pub fn short(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v.fract() == 0.0 && v.abs() < 1e9 {
        return format!("{}", v as i64);
    }
    let a = v.abs();
    let digits = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A real axis whose ticks are exactly the given values (plotters' own `WithKeyPoints` cannot
/// take a label formatter on an `f64` axis).
#[derive(Debug, Clone)]
struct Ticks {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticks {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Ticks {
        Ticks { lo, hi, ticks }
    }
}

impl Ranged for Ticks {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.lo) / (self.hi - self.lo);
        let len = (limit.1 - limit.0) as f64;
        if !t.is_finite() {
            return limit.0;
        }
        limit.0 + (len * t + 1e-3).floor() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for Ticks {
    fn format(v: &f64) -> String {
        short(*v)
    }
}

/// About `n` round tick values (1, 2 or 5 times a power of ten apart) within `lo..=hi`.
fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Indices `0..n` thinned so labels of `width` px fit along `length` px.
fn label_stride(n: usize, length: f64, widest: f64) -> usize {
    let per = length / n.max(1) as f64;
    ((widest + 10.0) / per).ceil().max(1.0) as usize
}

/// One heatmap panel: values per cell, `x + y * nx`, NaN = no data.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Shown above the panel (the values of the keys beyond the first two).
    pub title: Option<String>,
    /// One value per cell, `x + y * nx` with `nx = x_values.len()` of the [`Heatmap`];
    /// `nx * ny` entries.
    pub values: Vec<f64>,
}

/// Heatmaps over two axes, one panel per value of the further axes, sharing a colour scale.
#[derive(Debug, Clone)]
pub struct Heatmap {
    /// Bold line above the panels (plain text).
    pub title: String,
    /// A smaller second line under the title (a gate's expression).
    pub subtitle: Option<String>,
    /// Name of the key across (the x axis description).
    pub x_key: String,
    /// Tick labels of the columns, left to right (`nx` of them).
    pub x_values: Vec<String>,
    /// Name of the key up (the y axis description).
    pub y_key: String,
    /// Tick labels of the rows, bottom to top (`ny` of them).
    pub y_values: Vec<String>,
    /// The panels, in reading order, all on the same scale.
    pub panels: Vec<Panel>,
    /// The colour scale's ends (a pass rate uses 0..1 whatever the data).
    pub range: (f64, f64),
    /// The colour map of the cells and the scale.
    pub map: ColorMap,
    /// Label of the colour scale.
    pub legend: String,
    /// How a cell's value is written in the cell.
    pub format: fn(f64) -> String,
}

/// Layout of one heatmap panel.
struct HeatLayout {
    cw: u32,
    ch: u32,
    left: u32,
    bottom: u32,
    top: u32,
    panel_w: u32,
    panel_h: u32,
}

const CELL_FONT: f64 = 12.0;
const TICK_FONT: f64 = 13.0;

fn heat_layout(h: &Heatmap) -> HeatLayout {
    let (nx, ny) = (h.x_values.len() as u32, h.y_values.len() as u32);
    let multiple = h.panels.len() > 1;
    let (max_w, max_h) = if multiple { (380, 300) } else { (760, 460) };
    let cw = (max_w / nx).clamp(2, 110);
    let ch = (max_h / ny).clamp(2, 56);
    let widest_y = h
        .y_values
        .iter()
        .map(|v| text_width(v, TICK_FONT))
        .fold(0.0, f64::max);
    let left = (widest_y as u32 + 46).max(60);
    let (bottom, top) = (56, if multiple { 30 } else { 12 });
    HeatLayout {
        cw,
        ch,
        left,
        bottom,
        top,
        panel_w: left + nx * cw + 16,
        panel_h: top + ny * ch + bottom,
    }
}

/// Draw a heatmap (see [`Heatmap`]).
pub fn heatmap(h: &Heatmap) -> Result<Png, String> {
    let lay = heat_layout(h);
    let n = h.panels.len().max(1) as u32;
    let cols = (1200 / lay.panel_w).clamp(1, n);
    let rows = n.div_ceil(cols);
    let bar_w = 120;
    let title_h = if h.subtitle.is_some() { 52 } else { 34 };
    let widest =
        text_width(&h.title, 18.0).max(h.subtitle.as_deref().map_or(0.0, |t| text_width(t, 13.0)));
    let width = (cols * lay.panel_w + bar_w + 10).max(widest as u32 + 30);
    let height = title_h + rows * lay.panel_h + 6;
    render(width, height, |root| {
        root.draw(&Text::new(
            h.title.clone(),
            (10, 8),
            (FONT, 18).into_font().style(FontStyle::Bold),
        ))
        .map_err(err)?;
        if let Some(sub) = &h.subtitle {
            root.draw(&Text::new(sub.clone(), (10, 32), (FONT, 13)))
                .map_err(err)?;
        }
        let body = root.margin(title_h as i32, 6, 0, 0);
        let (grid, rest) = body.split_horizontally(cols * lay.panel_w);
        let (bar, _) = rest.split_horizontally(bar_w);
        for (i, panel) in h.panels.iter().enumerate() {
            let (r, c) = (i as u32 / cols, i as u32 % cols);
            let area = grid.clone().shrink(
                (c * lay.panel_w, r * lay.panel_h),
                (lay.panel_w, lay.panel_h),
            );
            heat_panel(&area, h, panel, &lay)?;
        }
        color_bar(&bar, h, rows * lay.panel_h)
    })
}

fn heat_panel(area: &Area, h: &Heatmap, p: &Panel, lay: &HeatLayout) -> DrawResult {
    let (nx, ny) = (h.x_values.len(), h.y_values.len());
    let x_stride = label_stride(
        nx,
        (nx as u32 * lay.cw) as f64,
        h.x_values
            .iter()
            .map(|v| text_width(v, TICK_FONT))
            .fold(0.0, f64::max),
    );
    let y_stride = label_stride(ny, (ny as u32 * lay.ch) as f64, TICK_FONT);
    let centres =
        |n: usize, stride: usize| (0..n).step_by(stride).map(|i| i as f64 + 0.5).collect();
    let mut b = ChartBuilder::on(area);
    b.margin_top(lay.top)
        .margin_right(16)
        .x_label_area_size(lay.bottom)
        .y_label_area_size(lay.left);
    if let Some(t) = &p.title {
        b.caption(t, (FONT, 15));
    }
    let mut chart = b
        .build_cartesian_2d(
            Ticks::new(0.0, nx as f64, centres(nx, x_stride)),
            Ticks::new(0.0, ny as f64, centres(ny, y_stride)),
        )
        .map_err(err)?;
    let label = |values: &[String], v: f64| {
        let i = (v - 0.5).round();
        if i >= 0.0 && (i as usize) < values.len() && (v - 0.5 - i).abs() < 1e-9 {
            values[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(&h.x_key)
        .y_desc(&h.y_key)
        .x_label_formatter(&|v| label(&h.x_values, *v))
        .y_label_formatter(&|v| label(&h.y_values, *v))
        .label_style((FONT, TICK_FONT))
        .axis_desc_style((FONT, 14))
        .axis_style(AXIS_GREY)
        .draw()
        .map_err(err)?;
    let (lo, hi) = h.range;
    let span = if hi > lo { hi - lo } else { 1.0 };
    let color = |v: f64| {
        if v.is_finite() {
            h.map.at((v - lo) / span)
        } else {
            NO_DATA
        }
    };
    chart
        .draw_series((0..ny).flat_map(|y| {
            (0..nx).map(move |x| {
                let v = p.values[x + y * nx];
                Rectangle::new(
                    [(x as f64, y as f64), (x as f64 + 1.0, y as f64 + 1.0)],
                    color(v).filled(),
                )
            })
        }))
        .map_err(err)?;
    // Write the value in each cell when every cell has room for its text.
    let texts: Vec<String> = p.values.iter().map(|&v| (h.format)(v)).collect();
    let widest = texts
        .iter()
        .map(|t| text_width(t, CELL_FONT))
        .fold(0.0, f64::max);
    if widest + 4.0 <= lay.cw as f64 && lay.ch >= 15 {
        let style = TextStyle::from((FONT, CELL_FONT).into_font())
            .pos(Pos::new(HPos::Center, VPos::Center));
        chart
            .draw_series((0..ny).flat_map(|y| {
                let (texts, style) = (&texts, &style);
                (0..nx).filter_map(move |x| {
                    let v = p.values[x + y * nx];
                    if !v.is_finite() {
                        return None;
                    }
                    let bg = color(v);
                    // Dark text on light cells, white on dark ones (relative luminance).
                    let lum = 0.2126 * bg.0 as f64 + 0.7152 * bg.1 as f64 + 0.0722 * bg.2 as f64;
                    let fg: &'static RGBColor = if lum > 140.0 { &BLACK } else { &WHITE };
                    Some(Text::new(
                        texts[x + y * nx].clone(),
                        (x as f64 + 0.5, y as f64 + 0.5),
                        style.color(fg),
                    ))
                })
            }))
            .map_err(err)?;
    }
    Ok(())
}

/// A vertical colour scale with labelled ticks, and a "no data" swatch when needed.
fn color_bar(area: &Area, h: &Heatmap, height: u32) -> DrawResult {
    let (lo, hi) = if h.range.1 > h.range.0 {
        h.range
    } else {
        (h.range.0 - 0.5, h.range.0 + 0.5)
    };
    let missing = h
        .panels
        .iter()
        .any(|p| p.values.iter().any(|v| !v.is_finite()));
    let bar_h = height
        .min(420)
        .saturating_sub(if missing { 34 } else { 4 })
        .max(100);
    let bar = area.clone().shrink((0, 4), (area.dim_in_pixel().0, bar_h));
    let mut chart = ChartBuilder::on(&bar)
        .margin(8)
        .margin_left(4)
        .right_y_label_area_size(62)
        .build_cartesian_2d(0f64..1f64, lo..hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(6)
        .y_label_formatter(&|v| short(*v))
        .y_desc(&h.legend)
        .label_style((FONT, TICK_FONT))
        .axis_desc_style((FONT, 13))
        .axis_style(AXIS_GREY)
        .draw()
        .map_err(err)?;
    let steps = 96;
    chart
        .draw_series((0..steps).map(|i| {
            let a = lo + (hi - lo) * i as f64 / steps as f64;
            let b = lo + (hi - lo) * (i + 1) as f64 / steps as f64;
            let t = (i as f64 + 0.5) / steps as f64;
            Rectangle::new([(0.0, a), (1.0, b)], h.map.at(t).filled())
        }))
        .map_err(err)?;
    if missing {
        let y = 4 + bar_h as i32 + 6;
        area.draw(&Rectangle::new([(12, y), (26, y + 14)], NO_DATA.filled()))
            .map_err(err)?;
        area.draw(&Text::new("no data", (32, y), (FONT, 13)))
            .map_err(err)?;
    }
    Ok(())
}

/// One line with a band: the mean and its p05-p95 range per x.
#[derive(Debug, Clone)]
pub struct Band {
    /// The series' name in the legend.
    pub label: String,
    /// X coordinate of each point (category index for [`XAxis::Categories`]); a non-finite
    /// value breaks the line there.
    pub x: Vec<f64>,
    /// The line's y value at each `x` (NaN breaks the line).
    pub mean: Vec<f64>,
    /// `None`: a line without a band.
    pub lo_hi: Option<(Vec<f64>, Vec<f64>)>,
}

/// How the x axis is labelled.
#[derive(Debug, Clone)]
pub enum XAxis {
    /// Real numbers.
    Numbers,
    /// Integers (steps, counts).
    Integers,
    /// Categories at x = 0, 1, 2, ...
    Categories(Vec<String>),
}

/// A line chart of one or more [`Band`]s.
#[derive(Debug, Clone)]
pub struct Lines {
    /// Bold caption above the plot (plain text).
    pub title: String,
    /// Label of the x axis.
    pub x_desc: String,
    /// Label of the y axis.
    pub y_desc: String,
    /// How the x axis is ranged and labelled.
    pub x_axis: XAxis,
    /// The lines, coloured in order by [`series_color`].
    pub series: Vec<Band>,
    /// Fixed y range (a pass rate: 0..1); `None` fits the data.
    pub y_range: Option<(f64, f64)>,
    /// Width of the plot in pixels; a legend adds its own column to the right of it.
    pub width: u32,
    /// Height of the picture in pixels.
    pub height: u32,
    /// Draw a legend of the series' labels (only when there are two or more series).
    pub legend: bool,
}

/// The finite runs of a series, so a missing value breaks the line instead of bending it.
fn runs(x: &[f64], y: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for (&a, &b) in x.iter().zip(y) {
        if a.is_finite() && b.is_finite() {
            out.last_mut().expect("non-empty").push((a, b));
        } else if !out.last().expect("non-empty").is_empty() {
            out.push(Vec::new());
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 {
        let d = if lo.abs() > 1e-9 {
            lo.abs() * 0.05
        } else {
            0.5
        };
        return (lo - d, hi + d);
    }
    let d = (hi - lo) * 0.06;
    (lo - d, hi + d)
}

/// Draw a line chart (see [`Lines`]).
pub fn lines(l: &Lines) -> Result<Png, String> {
    // The legend gets its own column right of the plot, so it never hides a line.
    let legend_w = if l.legend && l.series.len() > 1 {
        let widest = l
            .series
            .iter()
            .map(|s| text_width(&s.label, 12.0))
            .fold(0.0, f64::max);
        (widest as u32 + 44).min(300)
    } else {
        0
    };
    render(l.width + legend_w, l.height, |full| {
        let (root, legend) = full.split_horizontally(l.width);
        let root = &root;
        let all_x = l.series.iter().flat_map(|s| s.x.iter().copied());
        let (mut x0, mut x1) = all_x
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        let (x0, x1) = match l.x_axis {
            XAxis::Categories(_) | XAxis::Integers => (x0 - 0.5, x1 + 0.5),
            XAxis::Numbers => padded(x0, x1),
        };
        let (y0, y1) = match l.y_range {
            Some(r) => r,
            None => {
                let ys = l.series.iter().flat_map(|s| {
                    let band = s
                        .lo_hi
                        .iter()
                        .flat_map(|(a, b)| a.iter().chain(b.iter()).copied());
                    s.mean.iter().copied().chain(band)
                });
                let (a, b) = ys
                    .filter(|v| v.is_finite())
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                        (a.min(v), b.max(v))
                    });
                padded(a, b)
            }
        };
        let keys: Vec<f64> = match &l.x_axis {
            XAxis::Categories(c) => {
                let stride = label_stride(
                    c.len(),
                    l.width as f64 - 90.0,
                    c.iter()
                        .map(|v| text_width(v, TICK_FONT))
                        .fold(0.0, f64::max),
                );
                (0..c.len()).step_by(stride).map(|i| i as f64).collect()
            }
            XAxis::Integers => {
                let n = (x1 - x0).round() as usize;
                let stride = label_stride(n, l.width as f64 - 90.0, 2.0 * TICK_FONT);
                let first = x0.ceil() as i64;
                (first..=x1.floor() as i64)
                    .filter(|k| ((k - first) as usize).is_multiple_of(stride))
                    .map(|k| k as f64)
                    .collect()
            }
            XAxis::Numbers => nice_ticks(x0, x1, 8),
        };
        let mut chart = ChartBuilder::on(root)
            .caption(&l.title, (FONT, 16).into_font().style(FontStyle::Bold))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(Ticks::new(x0, x1, keys), y0..y1)
            .map_err(err)?;
        let x_label = |v: &f64| match &l.x_axis {
            XAxis::Categories(c) => c.get(v.round() as usize).cloned().unwrap_or_default(),
            _ => short(*v),
        };
        chart
            .configure_mesh()
            .max_light_lines(0)
            .bold_line_style(RGBColor(225, 225, 225))
            .x_desc(&l.x_desc)
            .y_desc(&l.y_desc)
            .x_label_formatter(&x_label)
            .y_label_formatter(&|v| short(*v))
            .label_style((FONT, TICK_FONT))
            .axis_desc_style((FONT, 14))
            .axis_style(AXIS_GREY)
            .draw()
            .map_err(err)?;
        let n = l.series.len();
        for (k, s) in l.series.iter().enumerate() {
            let c = series_color(k, n);
            if let Some((lo, hi)) = &s.lo_hi {
                for run in band_runs(&s.x, lo, hi) {
                    chart
                        .draw_series(std::iter::once(Polygon::new(run, c.mix(0.18).filled())))
                        .map_err(err)?;
                }
            }
        }
        for (k, s) in l.series.iter().enumerate() {
            let c = series_color(k, n);
            let runs = runs(&s.x, &s.mean);
            for run in &runs {
                chart
                    .draw_series(LineSeries::new(run.clone(), c.stroke_width(2)))
                    .map_err(err)?;
                if run.len() <= 16 {
                    chart
                        .draw_series(run.iter().map(|&p| Circle::new(p, 3, c.filled())))
                        .map_err(err)?;
                }
            }
        }
        if legend_w > 0 {
            let y0 = 48;
            for (k, s) in l.series.iter().enumerate() {
                let c = series_color(k, n);
                let y = y0 + 20 * k as i32;
                legend
                    .draw(&PathElement::new(vec![(4, y), (26, y)], c.stroke_width(3)))
                    .map_err(err)?;
                legend
                    .draw(&Text::new(
                        s.label.clone(),
                        (32, y),
                        TextStyle::from((FONT, 12.0).into_font())
                            .pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                    .map_err(err)?;
            }
        }
        Ok(())
    })
}

/// The band polygons (lo forwards, hi backwards) of each finite run.
fn band_runs(x: &[f64], lo: &[f64], hi: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur: Vec<(f64, f64, f64)> = Vec::new();
    let flush = |cur: &mut Vec<(f64, f64, f64)>, out: &mut Vec<Vec<(f64, f64)>>| {
        if cur.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = cur.iter().map(|&(x, a, _)| (x, a)).collect();
            poly.extend(cur.iter().rev().map(|&(x, _, b)| (x, b)));
            out.push(poly);
        }
        cur.clear();
    };
    for i in 0..x.len() {
        if x[i].is_finite() && lo[i].is_finite() && hi[i].is_finite() {
            cur.push((x[i], lo[i], hi[i]));
        } else {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// Small multiples of bar charts: the share of caves per component count, one panel per point.
#[derive(Debug, Clone)]
pub struct Histograms {
    /// Bold line above the panels (plain text).
    pub title: String,
    /// (panel title, (component count, caves) ascending).
    pub panels: Vec<(String, Vec<(u64, u64)>)>,
}

/// Most bars per histogram panel; wider distributions are binned.
const MAX_BARS: u64 = 48;

/// `(first count, last count, share of caves)` per bar: single counts while they fit, else
/// equal-width bins.
fn bars(bins: &[(u64, u64)]) -> Vec<(u64, u64, f64)> {
    let (Some(&(lo, _)), Some(&(hi, _))) = (bins.first(), bins.last()) else {
        return Vec::new();
    };
    let total: u64 = bins.iter().map(|&(_, c)| c).sum();
    let width = (hi - lo + 1).div_ceil(MAX_BARS).max(1);
    let mut out: Vec<(u64, u64, f64)> = Vec::new();
    for &(k, c) in bins {
        let start = lo + (k - lo) / width * width;
        let share = c as f64 / total.max(1) as f64;
        match out.last_mut() {
            Some(b) if b.0 == start => b.2 += share,
            _ => out.push((start, start + width - 1, share)),
        }
    }
    out
}

/// Draw component-count histograms (see [`Histograms`]). Each panel has its own axes: the
/// counts of different grid points can differ by orders of magnitude.
pub fn histograms(h: &Histograms) -> Result<Png, String> {
    let n = h.panels.len().max(1) as u32;
    let (pw, ph) = (300u32, 200u32);
    let cols = n.min(4);
    let rows = n.div_ceil(cols);
    let title_h = 34;
    render(cols * pw + 10, title_h + rows * ph + 4, |root| {
        root.draw(&Text::new(
            h.title.clone(),
            (10, 8),
            (FONT, 18).into_font().style(FontStyle::Bold),
        ))
        .map_err(err)?;
        for (i, (title, bins)) in h.panels.iter().enumerate() {
            let (r, c) = (i as u32 / cols, i as u32 % cols);
            let area = root
                .clone()
                .shrink((5 + c * pw, title_h + r * ph), (pw, ph));
            let bars = bars(bins);
            let (Some(first), Some(last)) = (bars.first(), bars.last()) else {
                continue;
            };
            // Small counts are shown from 0 over at least 8 values, so a lone bar is not a slab.
            let from = if last.1 <= 12 { 0 } else { first.0 };
            let to = last.1.max(from + 8);
            let (x0, x1) = (from as f64 - 0.6, to as f64 + 0.6);
            let ymax = bars.iter().map(|b| b.2).fold(0.0, f64::max).max(0.01);
            let keys: Vec<f64> = nice_ticks(x0, x1, 5)
                .into_iter()
                .filter(|v| v.fract() == 0.0)
                .collect();
            let mut chart = ChartBuilder::on(&area)
                .caption(title, (FONT, 13))
                .margin(6)
                .x_label_area_size(34)
                .y_label_area_size(44)
                .build_cartesian_2d(Ticks::new(x0, x1, keys), 0f64..ymax * 1.1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .max_light_lines(0)
                .bold_line_style(RGBColor(230, 230, 230))
                .x_desc("components")
                .y_desc("share of caves")
                .y_labels(4)
                .x_label_formatter(&|v| short(*v))
                .y_label_formatter(&|v| short(*v))
                .label_style((FONT, 11))
                .axis_desc_style((FONT, 11))
                .axis_style(AXIS_GREY)
                .draw()
                .map_err(err)?;
            chart
                .draw_series(bars.iter().map(|&(a, b, s)| {
                    let pad = if a == b { 0.4 } else { 0.45 };
                    Rectangle::new(
                        [(a as f64 - pad, 0.0), (b as f64 + pad, s)],
                        LINES[0].filled(),
                    )
                }))
                .map_err(err)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(p: &Png) -> Vec<u8> {
        let dec = png::Decoder::new(std::io::Cursor::new(&p.bytes));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (p.width, p.height));
        buf
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(3.0), "3");
        assert_eq!(short(0.4567), "0.457");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(12.345), "12.3");
        assert_eq!(short(1234.6), "1235");
        assert_eq!(short(f64::NAN), "");
    }

    #[test]
    fn heatmap_colours_cells_and_marks_missing_ones() {
        let h = Heatmap {
            title: "t".into(),
            subtitle: None,
            x_key: "fill".into(),
            x_values: vec!["0.4".into(), "0.5".into()],
            y_key: "steps".into(),
            y_values: vec!["1".into(), "2".into(), "3".into()],
            panels: vec![Panel {
                title: None,
                values: vec![0.0, 0.2, 0.4, f64::NAN, 0.8, 1.0],
            }],
            range: (0.0, 1.0),
            map: ColorMap::Viridis,
            legend: "pass rate".into(),
            format: short,
        };
        let p = heatmap(&h).unwrap();
        let px = decoded(&p);
        let has = |c: RGBColor| px.chunks(3).any(|q| q == [c.0, c.1, c.2]);
        assert!(has(ColorMap::Viridis.at(0.0)));
        assert!(has(ColorMap::Viridis.at(1.0)));
        assert!(has(NO_DATA));
    }

    #[test]
    fn wide_distributions_are_binned() {
        let narrow = bars(&[(1, 3), (2, 1)]);
        assert_eq!(narrow, vec![(1, 1, 0.75), (2, 2, 0.25)]);
        let wide: Vec<(u64, u64)> = (10..=300).map(|k| (k, 1)).collect();
        let b = bars(&wide);
        assert!(b.len() as u64 <= MAX_BARS);
        assert_eq!(b[0].0, 10);
        assert!((b.iter().map(|x| x.2).sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn runs_break_at_missing_values() {
        let x = [0.0, 1.0, 2.0, 3.0];
        let r = runs(&x, &[1.0, f64::NAN, 2.0, 3.0]);
        assert_eq!(r, vec![vec![(0.0, 1.0)], vec![(2.0, 2.0), (3.0, 3.0)]]);
        let b = band_runs(&x, &[0.0, 0.0, 0.0, 0.0], &[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].len(), 8);
    }
}
