//! The plot of a comparison (`badmin whatif --plot FILE.svg`): two panels over the
//! window, (a) the slots pending ("queue length") and (b) the utilisation (slots in use
//! over the side's slots, per cent), each with both sides of the comparison — what the log
//! recorded (or the baseline configuration) and the tried configuration — as two labelled
//! series. Drawn with `plotters`' SVG backend, which writes `<text>` elements and needs
//! no font library; the caller writes the file.

use crate::WhatIfError;
use crate::report::{Comparison, Side};
use crate::sim::Sample;
use plotters::prelude::*;

/// The plot's size, pixels.
pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 720;

/// The colour of the "before" side (recorded or baseline): blue.
pub const BEFORE: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
/// The colour of the "after" side (the tried configuration): orange-red.
pub const AFTER: RGBColor = RGBColor(0xd6, 0x27, 0x28);

/// The unit of the time axis: minutes for a window up to 3 hours, hours up to 3 days,
/// days beyond. (seconds per unit, its name)
pub fn time_unit(span_secs: i64) -> (f64, &'static str) {
    if span_secs <= 3 * 3600 {
        (60.0, "minutes")
    } else if span_secs <= 3 * 86_400 {
        (3600.0, "hours")
    } else {
        (86_400.0, "days")
    }
}

/// A timeline as steps: (time in `unit`s since `t0`, value), each sample's value held
/// until the next sample.
fn steps(
    timeline: &[Sample],
    t0: i64,
    unit: f64,
    value: impl Fn(&Sample) -> f64,
) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(timeline.len() * 2);
    for s in timeline {
        let x = (s.t - t0) as f64 / unit;
        let y = value(s);
        if let Some(&(_, prev)) = out.last()
            && prev != y
        {
            out.push((x, prev));
        }
        out.push((x, y));
    }
    out
}

fn utilisation(side: &Side) -> impl Fn(&Sample) -> f64 + '_ {
    move |s: &Sample| f64::from(s.running_slots) * 100.0 / f64::from(side.slots.max(1))
}

fn pending(s: &Sample) -> f64 {
    f64::from(s.pending)
}

/// One series of a panel: its side, its points, its colour.
type Series<'a> = (&'a Side, Vec<(f64, f64)>, RGBColor);

fn err(e: impl std::fmt::Display) -> WhatIfError {
    WhatIfError::Plot(e.to_string())
}

/// One panel: both sides' `value` over time.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    x: (f64, &str),
    series: [Series<'_>; 2],
    y_min_top: f64,
) -> Result<(), WhatIfError>
where
    DB::ErrorType: 'static,
{
    let (x_max, x_desc) = x;
    let y_top = series
        .iter()
        .flat_map(|(_, pts, _)| pts.iter().map(|p| p.1))
        .fold(y_min_top, f64::max)
        * 1.08;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..x_max.max(f64::EPSILON), 0f64..y_top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .y_label_formatter(&|v| {
            let s = format!("{v:.1}");
            s.strip_suffix(".0")
                .map_or_else(|| s.clone(), str::to_owned)
        })
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(err)?;
    for (side, points, colour) in series {
        let label = format!("{} ({} slots)", side.label, side.slots);
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))
            .map_err(err)?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    Ok(())
}

impl Comparison {
    /// The plot of both sides' timelines, as an SVG document.
    pub fn plot_svg(&self) -> Result<String, WhatIfError> {
        let (b, a) = (&self.before, &self.after);
        let times = || b.timeline.iter().chain(&a.timeline).map(|s| s.t);
        let t0 = times().min().unwrap_or(0);
        let t1 = times().max().unwrap_or(t0);
        let (unit, unit_name) = time_unit(t1 - t0);
        let x = (
            (t1 - t0).max(1) as f64 / unit,
            &*format!("time since the start of the window ({unit_name})"),
        );
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            let title = format!("badmin whatif: {} -> {}", b.label, a.label);
            let root = root.titled(&title, ("sans-serif", 26)).map_err(err)?;
            let panels = root.split_evenly((2, 1));
            let [top, bottom] = panels.as_slice() else {
                return Err(WhatIfError::Plot("two panels expected".to_owned()));
            };
            panel(
                top,
                "Queue length: slots pending",
                "slots pending",
                x,
                [
                    (b, steps(&b.timeline, t0, unit, pending), BEFORE),
                    (a, steps(&a.timeline, t0, unit, pending), AFTER),
                ],
                1.0,
            )?;
            panel(
                bottom,
                "Utilisation: slots in use / slots",
                "utilisation (%)",
                x,
                [
                    (b, steps(&b.timeline, t0, unit, utilisation(b)), BEFORE),
                    (a, steps(&a.timeline, t0, unit, utilisation(a)), AFTER),
                ],
                100.0,
            )?;
            root.present().map_err(err)?;
        }
        Ok(svg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side of `slots` slots whose timeline is `(pending, running)` every minute.
    fn side(label: &str, slots: u32, points: &[(u32, u32)]) -> Side {
        Side {
            label: label.to_owned(),
            slots,
            timeline: points
                .iter()
                .enumerate()
                .map(|(i, &(pending, running_slots))| Sample {
                    t: 1_800_000_000 + 60 * i as i64,
                    pending,
                    running_slots,
                })
                .collect(),
            ..Default::default()
        }
    }

    /// The points of the `n`th polyline (0: the first) drawn in `colour`, the legend's
    /// short lines (two points) left out.
    fn polyline(svg: &str, colour: RGBColor, n: usize) -> Vec<(i32, i32)> {
        let stroke = format!(
            "stroke=\"#{:02X}{:02X}{:02X}\"",
            colour.0, colour.1, colour.2
        );
        let lines: Vec<Vec<(i32, i32)>> = svg
            .lines()
            .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
            .filter_map(|l| l.split("points=\"").nth(1)?.split('"').next())
            .map(|pts| {
                pts.split_whitespace()
                    .filter_map(|p| {
                        let (x, y) = p.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|pts| pts.len() > 2)
            .collect();
        lines.get(n).cloned().unwrap_or_default()
    }

    /// Before: 7 slots pending, draining one a minute then all at once, one slot in use
    /// of 4. After: nothing pending, all 4 slots in use for two minutes.
    fn comparison() -> Comparison {
        Comparison {
            before: side("recorded", 4, &[(7, 1), (6, 1), (5, 1), (0, 1), (0, 0)]),
            after: side("what-if", 4, &[(0, 4), (0, 4), (0, 0), (0, 0), (0, 0)]),
            ..Default::default()
        }
    }

    #[test]
    fn the_plot_is_an_svg_with_both_sides_labelled_in_both_panels() {
        let svg = comparison().plot_svg().expect("plot");
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
        for text in [
            "recorded (4 slots)",
            "what-if (4 slots)",
            "Queue length: slots pending",
            "Utilisation: slots in use / slots",
            "slots pending",
            "utilisation (%)",
            "time since the start of the window (minutes)",
        ] {
            assert!(svg.contains(text), "{text}: {svg}");
        }
        // Two series and two legend lines per panel.
        for colour in [BEFORE, AFTER] {
            let stroke = format!("#{:02X}{:02X}{:02X}", colour.0, colour.1, colour.2);
            assert_eq!(svg.matches(&stroke).count(), 4, "{stroke}");
        }
    }

    #[test]
    fn the_plotted_lines_follow_the_timelines() {
        let svg = comparison().plot_svg().expect("plot");
        // Queue length: the what-if side never has pending work (a flat line on the x
        // axis); the recorded side starts high and steps down to it.
        let after = polyline(&svg, AFTER, 0);
        let before = polyline(&svg, BEFORE, 0);
        assert_eq!(after.len(), 5, "{after:?}");
        let floor = after[0].1;
        assert!(after.iter().all(|p| p.1 == floor), "{after:?}");
        assert!(
            before[0].1 < floor - 100,
            "7 pending is high up: {before:?}"
        );
        assert_eq!(before.last().map(|p| p.1), Some(floor), "{before:?}");
        // Steps: 7, 6, 5 held a minute each, then 0 (each change a vertical step).
        let ys: Vec<i32> = before.iter().map(|p| p.1).collect();
        assert!(ys.windows(2).all(|w| w[0] <= w[1]), "{ys:?}");
        assert_eq!(before.len(), 8, "{before:?}");
        // The x axis spans the four minutes; the lines end at its right end.
        assert_eq!(after.last().map(|p| p.0), before.last().map(|p| p.0));
        // Utilisation: what-if at 100 % (above the recorded 25 %) for two minutes.
        let (a, b) = (polyline(&svg, AFTER, 1), polyline(&svg, BEFORE, 1));
        assert!(a[0].1 < b[0].1, "{a:?} {b:?}");
        assert_eq!(
            a.last().map(|p| p.1),
            b.last().map(|p| p.1),
            "both end idle"
        );
    }

    #[test]
    fn the_time_axis_unit_follows_the_window() {
        assert_eq!(time_unit(600).1, "minutes");
        assert_eq!(time_unit(3 * 3600).1, "minutes");
        assert_eq!(time_unit(86_400).1, "hours");
        assert_eq!(time_unit(30 * 86_400).1, "days");
        // An empty comparison still draws (an empty window).
        let svg = Comparison::default().plot_svg().expect("plot");
        assert!(svg.starts_with("<svg"));
    }
}
