//! The drawing surface of the report's charts: plotters' `BitMapBackend` with its own text.
//!
//! plotters 0.3.7's `ab_glyph` text path places each glyph's ink box at the pen position,
//! dropping the glyph's left side bearing, so narrow letters drift ("fi ll", "step s"). This
//! wrapper delegates every drawing call to the bitmap backend except text, which it lays out
//! with `ab_glyph` itself (bearings and kerning kept), with the same advance widths plotters
//! uses to measure text, so plotters' label placement still fits. Fonts are the bundled
//! DejaVu Sans (regular and bold).

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontStyle,
};

/// Baseline of a line of text, as a share of the font size below its box's top: digits and
/// lowercase then sit centred on the box plotters measures (height = size / 1.24).
const BASELINE: f32 = 0.72;

fn font(bold: bool) -> &'static FontRef<'static> {
    static REGULAR: OnceLock<FontRef<'static>> = OnceLock::new();
    static BOLD: OnceLock<FontRef<'static>> = OnceLock::new();
    let (cell, bytes) = if bold {
        (&BOLD, dejavu::sans::bold())
    } else {
        (&REGULAR, dejavu::sans::regular())
    };
    cell.get_or_init(|| FontRef::try_from_slice(bytes).expect("bundled DejaVu Sans loads"))
}

/// Rasterise `text` at `size` pixels, calling `put(x, y, coverage)` with `(0, 0)` the top left
/// of its box.
pub fn glyphs(text: &str, size: f32, bold: bool, mut put: impl FnMut(i32, i32, f32)) {
    let f = font(bold);
    let scale = PxScale::from(size);
    let sf = f.as_scaled(scale);
    let mut pen = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = sf.glyph_id(c);
        if let Some(p) = prev {
            pen += sf.kern(p, id);
        }
        let glyph = id.with_scale_and_position(scale, point(pen, BASELINE * size));
        if let Some(og) = f.outline_glyph(glyph) {
            let b = og.px_bounds();
            og.draw(|x, y, cov| put(b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, cov));
        }
        pen += sf.h_advance(id);
        prev = Some(id);
    }
}

/// A bitmap backend that draws text with [`glyphs`]. See the module docs.
pub struct Canvas<'a> {
    inner: BitMapBackend<'a>,
}

impl<'a> Canvas<'a> {
    /// Draw on an RGB buffer of `size` pixels.
    pub fn new(buf: &'a mut [u8], size: (u32, u32)) -> Canvas<'a> {
        Canvas {
            inner: BitMapBackend::with_buffer(buf, size),
        }
    }
}

type Error<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

impl<'a> DrawingBackend for Canvas<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error<'a>> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Error<'a>> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> Result<(), Error<'a>> {
        self.inner.draw_pixel(p, c)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Error<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    /// Anchoring and rotation as plotters' default `draw_text`; the glyphs from [`glyphs`].
    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Result<(), Error<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        let bold = matches!(style.style(), FontStyle::Bold);
        let mut px = Vec::new();
        glyphs(text, style.size() as f32, bold, |x, y, cov| {
            px.push((x, y, cov))
        });
        for (x, y, cov) in px {
            let (x, y) = trans.transform(x + dx, y + dy);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && y >= 0 && x < w as i32 && y < h as i32 && cov > 0.0 {
                self.inner.draw_pixel(
                    (x, y),
                    BackendColor {
                        alpha: color.alpha * cov.min(1.0) as f64,
                        rgb: color.rgb,
                    },
                )?;
            }
        }
        Ok(())
    }
}
