//! The charts of the HTML reports, drawn as inline SVG with plotters (its SVG backend needs no
//! font library: the browser lays out the text). Each function draws one kind of chart from
//! plain numbers and returns the `<svg>` element.

use crate::error::{Error, Result};
use crate::stats::Histogram;
use crate::units::fmt_figure;
use plotters::coord::Shift;
use plotters::coord::ranged1d::AsRangedCoord;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::ops::Range;

pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 300;

/// The palette: distinct in print and for the common colour-blindnesses (Okabe–Ito).
pub const BLUE: RGBColor = RGBColor(0, 114, 178);
pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub const GREEN: RGBColor = RGBColor(0, 158, 115);
pub const RED: RGBColor = RGBColor(213, 94, 0);
pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
pub const GREY: RGBColor = RGBColor(120, 120, 120);
pub const SKY: RGBColor = RGBColor(86, 180, 233);

/// The colours of successive series.
pub const SERIES: [RGBColor; 6] = [BLUE, ORANGE, GREEN, PURPLE, SKY, RED];

const FONT: &str = "sans-serif";

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawError = Box<dyn std::error::Error>;
type Drawn = std::result::Result<(), DrawError>;
/// A chart's frame on `DB`, `X` by `Y` ([`frame`]).
type Framed<'a, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;

/// Every chart's legend: a light box at `at`, the series' names in the report's font.
fn draw_legend<'a, 'b: 'a, CT: CoordTranslate>(
    c: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    at: SeriesLabelPosition,
) -> Drawn {
    c.configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}

/// Draws on a fresh canvas of the reports' size and returns the SVG; `title` names the chart in
/// an error.
fn canvas(title: &str, draw: impl FnOnce(&Area<'_>) -> Drawn) -> Result<String> {
    canvas_sized(title, (WIDTH, HEIGHT), draw)
}

/// [`canvas`] of `size` pixels.
fn canvas_sized(
    title: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Area<'_>) -> Drawn,
) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.into())
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(|e| e.into()));
        drawn.map_err(|e| Error::Chart {
            chart: title.to_string(),
            detail: e.to_string(),
        })?;
    }
    Ok(svg)
}

/// Every chart's frame: its title over the plotting area, room for the axes' labels, and the
/// coordinates `x` by `y`.
fn frame<'a, DB, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    x: X,
    y: Y,
) -> std::result::Result<Framed<'a, DB, X::CoordDescType, Y::CoordDescType>, DrawError>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
{
    Ok(ChartBuilder::on(root)
        .caption(title, (FONT, 17))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(60)
        .build_cartesian_2d(x, y)?)
}

/// The grid of a chart with numbers on both axes, `x_desc` and `y_desc` naming them.
fn numeric_grid<'a, 'b: 'a>(
    c: &mut Framed<'a, SVGBackend<'b>, RangedCoordf64, RangedCoordf64>,
    x_desc: &str,
    y_desc: &str,
) -> Drawn {
    c.configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| fmt_figure(*v))
        .y_label_formatter(&|v| fmt_figure(*v))
        .label_style((FONT, 12))
        .light_line_style(GRID)
        .draw()?;
    Ok(())
}

/// The light grid lines of every chart with a grid.
const GRID: RGBColor = RGBColor(235, 235, 235);

/// A range that shows `values` with a little room, never empty.
pub fn padded(lo: f64, hi: f64) -> Range<f64> {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    let span = (hi - lo).max(hi.abs() * 0.05).max(1e-9);
    (lo - span * 0.05)..(hi + span * 0.08)
}

/// One line of a line chart.
pub struct Line {
    pub name: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

/// A horizontal rule across a chart (a margin, an answer) or a vertical mark (an xrun).
pub struct Rule {
    pub at: f64,
    pub label: String,
    pub color: RGBColor,
}

/// Lines over a numeric x axis, with horizontal rules and vertical marks.
pub fn lines(
    title: &str,
    (x_desc, x): (&str, Range<f64>),
    (y_desc, y): (&str, Range<f64>),
    lines: &[Line],
    rules: &[Rule],
    marks: &[Rule],
) -> Result<String> {
    canvas(title, |root| {
        let mut c = frame(root, title, x.clone(), y.clone())?;
        numeric_grid(&mut c, x_desc, y_desc)?;
        for m in marks {
            let color = m.color;
            c.draw_series(LineSeries::new(
                [(m.at, y.start), (m.at, y.end)],
                color.mix(0.7).stroke_width(1),
            ))?
            .label(m.label.clone())
            .legend(move |(px, py)| PathElement::new([(px + 8, py - 6), (px + 8, py + 6)], color));
        }
        for r in rules {
            let color = r.color;
            c.draw_series(DashedLineSeries::new(
                [(x.start, r.at), (x.end, r.at)],
                6,
                4,
                color.stroke_width(2),
            ))?
            .label(r.label.clone())
            .legend(move |(px, py)| PathElement::new([(px, py), (px + 16, py)], color));
        }
        for l in lines {
            let color = l.color;
            c.draw_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(l.name.clone())
            .legend(move |(px, py)| {
                PathElement::new([(px, py), (px + 16, py)], color.stroke_width(2))
            });
        }
        draw_legend(&mut c, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// One series of a bar chart: a value and the words written above its bar, per category.
pub struct BarSeries {
    pub name: String,
    pub color: RGBColor,
    pub values: Vec<f64>,
    pub labels: Vec<String>,
}

/// Grouped vertical bars: one group per category, one bar per series, each bar labelled.
pub fn bars(
    title: &str,
    categories: &[String],
    y_desc: &str,
    series: &[BarSeries],
) -> Result<String> {
    let top = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0f64, f64::max);
    let n = categories.len().max(1);
    let per = series.len().max(1);
    canvas(title, |root| {
        let mut c = frame(
            root,
            title,
            0f64..n as f64,
            0f64..(top * if per > 1 { 1.4 } else { 1.15 }).max(1e-9),
        )?;
        let cats = categories.to_vec();
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&move |x| {
                let i = x.floor() as usize;
                if (x - i as f64 - 0.5).abs() < 1e-6 {
                    cats.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc(y_desc)
            .y_label_formatter(&|v| fmt_figure(*v))
            .label_style((FONT, 12))
            .light_line_style(GRID)
            .draw()?;
        let width = 0.8 / per as f64;
        for (k, s) in series.iter().enumerate() {
            let color = s.color;
            c.draw_series(s.values.iter().enumerate().map(|(i, &v)| {
                let x0 = i as f64 + 0.1 + k as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], color.filled())
            }))?
            .label(s.name.clone())
            .legend(move |(px, py)| {
                Rectangle::new([(px, py - 5), (px + 12, py + 5)], color.filled())
            });
            c.draw_series(s.values.iter().enumerate().map(|(i, &v)| {
                let x = i as f64 + 0.1 + (k as f64 + 0.5) * width;
                Text::new(
                    s.labels.get(i).cloned().unwrap_or_default(),
                    (x, v + top * 0.015),
                    (FONT, 11).into_font().color(&BLACK).pos(
                        plotters::style::text_anchor::Pos::new(
                            plotters::style::text_anchor::HPos::Center,
                            plotters::style::text_anchor::VPos::Bottom,
                        ),
                    ),
                )
            }))?;
        }
        if series.len() > 1 {
            draw_legend(&mut c, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    })
}

/// Time distributions on a logarithmic axis: each series' share per bucket (quarter octaves), as
/// steps. `axes` names what the buckets count (x) and what the shares are of (y).
pub fn histograms(
    title: &str,
    axes: (&str, &str),
    series: &[(String, RGBColor, &Histogram)],
) -> Result<String> {
    let buckets = || series.iter().flat_map(|s| s.2.buckets.iter());
    let lo = buckets()
        .map(|b| b.le_us / Histogram::STEP)
        .fold(f64::INFINITY, f64::min);
    let hi = buckets().map(|b| b.le_us).fold(0.0f64, f64::max);
    let share = |h: &Histogram, count: u64| 100.0 * count as f64 / h.total().max(1) as f64;
    let top = series
        .iter()
        .flat_map(|s| s.2.buckets.iter().map(|b| share(s.2, b.count)))
        .fold(0.0f64, f64::max);
    // At least a decade, so that the axis has a labelled step however narrow the data.
    let (lo, hi) = if lo.is_finite() && hi > lo {
        ((lo / 1.5).min(hi / 10.0), hi * 1.5)
    } else {
        (1.0, 10.0)
    };
    canvas(title, |root| {
        let mut c = frame(
            root,
            title,
            (lo..hi).log_scale(),
            0f64..(top * 1.1).max(1.0),
        )?;
        c.configure_mesh()
            .x_desc(axes.0)
            .y_desc(axes.1)
            .x_labels(30)
            // Only the 1-2-5 steps of each decade: a log axis's other key points crowd.
            .x_label_formatter(&|us| {
                let mantissa = us / 10f64.powf(us.log10().floor());
                if [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 0.02) {
                    crate::units::fmt_micros(*us)
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| fmt_figure(*v))
            .label_style((FONT, 12))
            .light_line_style(TRANSPARENT)
            .draw()?;
        for (name, color, h) in series {
            let color = *color;
            let mut pts = Vec::with_capacity(h.buckets.len() * 2 + 2);
            for b in &h.buckets {
                let y = share(h, b.count);
                pts.push((b.le_us / Histogram::STEP, y));
                pts.push((b.le_us, y));
            }
            if let (Some(first), Some(last)) = (pts.first().copied(), pts.last().copied()) {
                pts.insert(0, (first.0, 0.0));
                pts.push((last.0, 0.0));
            }
            c.draw_series(AreaSeries::new(pts.iter().copied(), 0.0, color.mix(0.25)))?;
            c.draw_series(LineSeries::new(pts, color.stroke_width(2)))?
                .label(name.clone())
                .legend(move |(px, py)| {
                    PathElement::new([(px, py), (px + 16, py)], color.stroke_width(2))
                });
        }
        draw_legend(&mut c, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// One probe of a search, for [`probes`].
pub struct ProbePoint {
    /// Seconds since the search's first probe started.
    pub t_s: f64,
    pub count: f64,
    pub color: RGBColor,
    pub confirmation: bool,
}

/// A search over time: each probe's count where it ended, coloured by its verdict (the legend
/// lists the verdicts in `legend`), confirmations as rings, the answer as a rule.
pub fn probes(
    title: &str,
    y_desc: &str,
    points: &[ProbePoint],
    answer: Option<f64>,
    legend: &[(String, RGBColor)],
) -> Result<String> {
    let t_end = points.iter().map(|p| p.t_s).fold(0.0f64, f64::max);
    let top = points
        .iter()
        .map(|p| p.count)
        .chain(answer)
        .fold(0.0f64, f64::max);
    canvas(title, |root| {
        let mut c = frame(root, title, padded(0.0, t_end), 0f64..(top * 1.15).max(1.0))?;
        numeric_grid(&mut c, "seconds into the search", y_desc)?;
        c.draw_series(LineSeries::new(
            points.iter().map(|p| (p.t_s, p.count)),
            GREY.mix(0.5).stroke_width(1),
        ))?;
        if let Some(a) = answer {
            c.draw_series(DashedLineSeries::new(
                [(0.0, a), (t_end.max(1e-9), a)],
                6,
                4,
                BLUE.stroke_width(2),
            ))?
            .label(format!("answer: {a:.0}"))
            .legend(|(px, py)| PathElement::new([(px, py), (px + 16, py)], BLUE.stroke_width(2)));
        }
        c.draw_series(points.iter().map(|p| {
            let style = if p.confirmation {
                p.color.stroke_width(3)
            } else {
                p.color.filled()
            };
            Circle::new((p.t_s, p.count), 6, style)
        }))?;
        for (name, color) in legend {
            let color = *color;
            // Legend entries only: a series with no points.
            c.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                .label(name.clone())
                .legend(move |(px, py)| Circle::new((px + 8, py), 5, color.filled()));
        }
        draw_legend(&mut c, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// One run in a disk's series over time: its place (1 for the oldest shown), its figure, its
/// spread in the figure's units, and whether it is the result the page is about.
pub struct RunPoint {
    pub x: f64,
    pub value: f64,
    pub err: f64,
    pub this: bool,
}

/// A level a series held: from run `from` to run `to`, at `value`.
pub struct Level {
    pub from: f64,
    pub to: f64,
    pub value: f64,
}

/// A disk's series over its runs: each run a dot with its spread, the levels between steps
/// dashed, each step a vertical mark labelled with its change, the page's own result ringed.
pub fn over_time(
    title: &str,
    y_desc: &str,
    points: &[RunPoint],
    levels: &[Level],
    steps: &[Rule],
) -> Result<String> {
    let last = points.iter().map(|p| p.x).fold(1.0f64, f64::max);
    let lo = points
        .iter()
        .map(|p| p.value - p.err)
        .fold(f64::MAX, f64::min);
    let hi = points
        .iter()
        .map(|p| p.value + p.err)
        .fold(0.0f64, f64::max);
    // Room below the runs for the legend.
    let y = {
        let r = padded(lo.min(hi), hi);
        (r.start - 0.45 * (r.end - r.start))..r.end
    };
    canvas(title, |root| {
        let mut c = frame(root, title, 0.5..last + 0.5, y.clone())?;
        c.configure_mesh()
            .x_desc("run, oldest first")
            .y_desc(y_desc)
            .x_labels(points.len().clamp(2, 12))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| fmt_figure(*v))
            .label_style((FONT, 12))
            .light_line_style(GRID)
            .draw()?;
        for m in steps {
            let color = m.color;
            c.draw_series(LineSeries::new(
                [(m.at, y.start), (m.at, y.end)],
                color.mix(0.8).stroke_width(2),
            ))?
            .label(m.label.clone())
            .legend(move |(px, py)| PathElement::new([(px + 8, py - 6), (px + 8, py + 6)], color));
        }
        for l in levels {
            c.draw_series(DashedLineSeries::new(
                [(l.from, l.value), (l.to, l.value)],
                6,
                4,
                GREY.stroke_width(2),
            ))?;
        }
        draw_runs(&mut c, points)?;
        draw_legend(&mut c, SeriesLabelPosition::LowerLeft)?;
        Ok(())
    })
}

/// The runs of [`over_time`]: joined by a faint line, each a dot with its spread as a bar, the
/// page's own result larger and orange.
fn draw_runs<'a, 'b: 'a>(
    c: &mut Framed<'a, SVGBackend<'b>, RangedCoordf64, RangedCoordf64>,
    points: &[RunPoint],
) -> Drawn {
    c.draw_series(LineSeries::new(
        points.iter().map(|p| (p.x, p.value)),
        BLUE.mix(0.4).stroke_width(1),
    ))?;
    c.draw_series(points.iter().filter(|p| p.err > 0.0).map(|p| {
        PathElement::new(
            [(p.x, p.value - p.err), (p.x, p.value + p.err)],
            BLUE.mix(0.6).stroke_width(2),
        )
    }))?;
    c.draw_series(points.iter().map(|p| {
        let style = if p.this {
            ORANGE.filled()
        } else {
            BLUE.filled()
        };
        Circle::new((p.x, p.value), if p.this { 7 } else { 5 }, style)
    }))?
    .label("a run (its spread as a bar)")
    .legend(|(px, py)| Circle::new((px + 8, py), 5, BLUE.filled()));
    if points.iter().any(|p| p.this) {
        c.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label("this result")
            .legend(|(px, py)| Circle::new((px + 8, py), 6, ORANGE.filled()));
    }
    Ok(())
}

/// Horizontal bars of percentages (100% = the best), one per labelled result, for comparisons.
pub fn percent_bars(title: &str, bars: &[(String, f64, String)]) -> Result<String> {
    let n = bars.len().max(1);
    let height = (60 + 34 * n as u32).max(120);
    canvas_sized(title, (WIDTH, height), |root| {
        let mut c = ChartBuilder::on(root)
            .caption(title, (FONT, 15))
            .margin(10)
            .x_label_area_size(28)
            .y_label_area_size(160)
            .build_cartesian_2d(0f64..112f64, 0f64..n as f64)?;
        let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        c.configure_mesh()
            .disable_y_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&move |y| {
                let i = y.floor() as usize;
                if (y - i as f64 - 0.5).abs() < 1e-6 {
                    names.get(n - 1 - i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_label_formatter(&|x| format!("{x:.0}%"))
            .label_style((FONT, 12))
            .light_line_style(GRID)
            .draw()?;
        c.draw_series(bars.iter().enumerate().map(|(i, (_, pct, _))| {
            let y0 = (n - 1 - i) as f64 + 0.15;
            let color = if *pct >= 99.95 { GREEN } else { BLUE };
            Rectangle::new(
                [(0.0, y0), (pct.clamp(0.0, 100.0), y0 + 0.7)],
                color.filled(),
            )
        }))?;
        c.draw_series(bars.iter().enumerate().map(|(i, (_, pct, shown))| {
            Text::new(
                format!("{shown} ({pct:.0}%)"),
                (pct.clamp(0.0, 100.0) + 1.0, (n - 1 - i) as f64 + 0.5),
                (FONT, 12)
                    .into_font()
                    .color(&BLACK)
                    .pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Center,
                    )),
            )
        }))?;
        Ok(())
    })
}
