//! The report as a list of blocks, written twice: as one self-contained HTML page (inline CSS,
//! no scripts, no fonts or files fetched; images beside it) and as Markdown for a forge.
//!
//! Text may hold `code spans` in backticks; everything else is escaped.

use std::fmt::Write;

/// A picture beside the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    /// Path relative to the page.
    pub path: String,
    /// Alternative text of the image (plain text, escaped in HTML).
    pub alt: String,
    /// Width of the PNG in pixels (the `<img>` size, so the page does not reflow on load).
    pub width: u32,
    /// Height of the PNG in pixels.
    pub height: u32,
    /// Text under the picture (may hold `code spans`); `None` for none.
    pub caption: Option<String>,
}

/// One block of the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// The page title (`<h1>`, `#`); the first one is also the HTML `<title>`.
    Title(String),
    /// A section heading (`<h2>`, `##`).
    Heading(String),
    /// A subsection heading (`<h3>`, `###`).
    Subheading(String),
    /// A paragraph of inline text.
    Para(String),
    /// A highlighted paragraph (an unfinished sweep, a shard).
    Notice(String),
    /// Preformatted text shown verbatim (a command line), no `code spans` inside.
    Code(String),
    /// One picture on its own.
    Image(Figure),
    /// Pictures side by side, wrapping.
    Strip(Vec<Figure>),
    /// Header row and rows; `numeric[i]` right-aligns column i.
    Table {
        /// Column headings (inline text).
        head: Vec<String>,
        /// Body rows, each a list of cells (inline text), in column order.
        rows: Vec<Vec<String>>,
        /// Per column: right-align it (numbers); missing entries mean left-aligned.
        numeric: Vec<bool>,
    },
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

/// Inline text to HTML: escaped, with `code spans`.
fn inline(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}

const CSS: &str = "\
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0 auto;max-width:1400px;\
padding:16px 24px 48px;color:#1d1d1f;line-height:1.45}\
h1{font-size:26px;margin:8px 0 4px}h2{font-size:21px;margin:30px 0 8px;border-bottom:1px solid #ddd;\
padding-bottom:4px}h3{font-size:17px;margin:20px 0 6px}\
code{background:#f3f3f3;padding:1px 4px;border-radius:3px;font-size:90%}\
pre{background:#f6f6f6;padding:10px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}\
.notice{background:#fff6d6;border:1px solid #e3c766;padding:8px 12px;border-radius:4px}\
.scroll{overflow-x:auto}table{border-collapse:collapse;margin:8px 0;font-size:14px}\
td code{white-space:nowrap}th,td{border:1px solid #ccc;\
padding:3px 8px;text-align:left;vertical-align:top}td.n{text-align:right;\
font-variant-numeric:tabular-nums}th{background:#f0f0f0}\
img{max-width:100%;height:auto;display:block}figure{margin:8px 0}\
figcaption{font-size:13px;color:#444;max-width:100%}\
.strip{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}\
.strip figure{margin:0}";

/// The page as HTML.
pub fn html(blocks: &[Block]) -> String {
    let title = blocks
        .iter()
        .find_map(|b| match b {
            Block::Title(t) => Some(t.as_str()),
            _ => None,
        })
        .unwrap_or("cavesweep report");
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(title)
    );
    let fig = |o: &mut String, f: &Figure| {
        let _ = write!(
            o,
            "<figure><img src=\"{}\" alt=\"{}\" width=\"{}\" height=\"{}\">",
            esc(&f.path),
            esc(&f.alt),
            f.width,
            f.height
        );
        if let Some(c) = &f.caption {
            let _ = write!(
                o,
                "<figcaption style=\"width:{}px\">{}</figcaption>",
                f.width.max(160),
                inline(c)
            );
        }
        o.push_str("</figure>\n");
    };
    for b in blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(o, "<h1>{}</h1>", inline(t));
            }
            Block::Heading(t) => {
                let _ = writeln!(o, "<h2>{}</h2>", inline(t));
            }
            Block::Subheading(t) => {
                let _ = writeln!(o, "<h3>{}</h3>", inline(t));
            }
            Block::Para(t) => {
                let _ = writeln!(o, "<p>{}</p>", inline(t));
            }
            Block::Notice(t) => {
                let _ = writeln!(o, "<p class=\"notice\">{}</p>", inline(t));
            }
            Block::Code(t) => {
                let _ = writeln!(o, "<pre><code>{}</code></pre>", esc(t));
            }
            Block::Image(f) => fig(&mut o, f),
            Block::Strip(fs) => {
                o.push_str("<div class=\"strip\">\n");
                for f in fs {
                    fig(&mut o, f);
                }
                o.push_str("</div>\n");
            }
            Block::Table {
                head,
                rows,
                numeric,
            } => {
                o.push_str("<div class=\"scroll\"><table>\n<thead><tr>");
                for h in head {
                    let _ = write!(o, "<th>{}</th>", inline(h));
                }
                o.push_str("</tr></thead>\n<tbody>\n");
                for r in rows {
                    o.push_str("<tr>");
                    for (i, c) in r.iter().enumerate() {
                        let class = if numeric.get(i).copied().unwrap_or(false) {
                            " class=\"n\""
                        } else {
                            ""
                        };
                        let _ = write!(o, "<td{class}>{}</td>", inline(c));
                    }
                    o.push_str("</tr>\n");
                }
                o.push_str("</tbody>\n</table></div>\n");
            }
        }
    }
    o.push_str("</body>\n</html>\n");
    o
}

/// Markdown table cells cannot hold `|` or line breaks.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The page as Markdown (same content; pictures as links to the same files).
pub fn markdown(blocks: &[Block]) -> String {
    let mut o = String::new();
    for b in blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(o, "# {t}\n");
            }
            Block::Heading(t) => {
                let _ = writeln!(o, "## {t}\n");
            }
            Block::Subheading(t) => {
                let _ = writeln!(o, "### {t}\n");
            }
            Block::Para(t) => {
                let _ = writeln!(o, "{t}\n");
            }
            Block::Notice(t) => {
                let _ = writeln!(o, "> **Note:** {t}\n");
            }
            Block::Code(t) => {
                let _ = writeln!(o, "```text\n{t}\n```\n");
            }
            Block::Image(f) => {
                let _ = writeln!(o, "![{}]({})\n", f.alt, f.path);
                if let Some(c) = &f.caption {
                    let _ = writeln!(o, "{c}\n");
                }
            }
            Block::Strip(fs) => {
                // A table lays the pictures side by side on a forge.
                let per_row = 4;
                for chunk in fs.chunks(per_row) {
                    let cells: Vec<String> = chunk
                        .iter()
                        .map(|f| {
                            let cap = f.caption.as_deref().map(md_cell).unwrap_or_default();
                            format!("![{}]({})<br>{cap}", md_cell(&f.alt), f.path)
                        })
                        .collect();
                    let _ = writeln!(o, "| {} |", cells.join(" | "));
                    let _ = writeln!(o, "|{}", "---|".repeat(cells.len()));
                    o.push('\n');
                }
            }
            Block::Table {
                head,
                rows,
                numeric,
            } => {
                let _ = writeln!(
                    o,
                    "| {} |",
                    head.iter()
                        .map(|h| md_cell(h))
                        .collect::<Vec<_>>()
                        .join(" | ")
                );
                let align: Vec<&str> = (0..head.len())
                    .map(|i| {
                        if numeric.get(i).copied().unwrap_or(false) {
                            "---:"
                        } else {
                            "---"
                        }
                    })
                    .collect();
                let _ = writeln!(o, "|{}|", align.join("|"));
                for r in rows {
                    let _ = writeln!(
                        o,
                        "| {} |",
                        r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
                    );
                }
                o.push('\n');
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_code_spans() {
        let b = vec![
            Block::Title("a <b> & `c<d`".into()),
            Block::Table {
                head: vec!["x|y".into()],
                rows: vec![vec!["1".into()]],
                numeric: vec![true],
            },
        ];
        let h = html(&b);
        assert!(h.contains("<h1>a &lt;b&gt; &amp; <code>c&lt;d</code></h1>"));
        assert!(h.contains("<td class=\"n\">1</td>"));
        let m = markdown(&b);
        assert!(m.contains("| x\\|y |\n|---:|\n| 1 |"));
    }
}
