//! Column widths written on `<col>` (Google Docs puts a table's widths in
//! `<colgroup><col width="…">`, not on the cells), handed to each cell as its `colwidth` by the
//! columns it covers. Tiptap also reads them, but by the cell's index in its row, which gives
//! wrong widths once a cell spans columns or rows; here the position is counted on the grid.

use std::collections::HashMap;

use ego_tree::{NodeId, NodeRef};
use scraper::Node;

use super::html::parse_int;

/// Widths beyond this many columns are ignored (bounds the grid bookkeeping).
const MAX_COLUMNS: usize = 1000;

/// `colwidth` for the cells of `table` (a `<table>` element) that lie under columns which all
/// have a width; cells elsewhere are not in the map.
pub fn cell_widths(table: NodeRef<'_, Node>) -> HashMap<NodeId, Vec<u32>> {
    let columns = columns(table);
    let mut widths = HashMap::new();
    if columns.iter().all(Option::is_none) {
        return widths;
    }
    // Per column, the first row not covered by a cell from a row above.
    let mut free_from = vec![0usize; columns.len()];
    for (r, row) in rows(table).enumerate() {
        let mut col = 0;
        for (cell, _) in elements(row).filter(|(_, name)| matches!(*name, "td" | "th")) {
            while col < columns.len() && free_from[col] > r {
                col += 1;
            }
            let (colspan, rowspan) = spans(cell);
            let end = (col + colspan as usize).min(columns.len());
            if col + colspan as usize <= columns.len()
                && let Some(w) = columns[col..end].iter().copied().collect::<Option<Vec<u32>>>()
            {
                widths.insert(cell.id(), w);
            }
            for f in &mut free_from[col.min(end)..end] {
                *f = r + rowspan as usize;
            }
            col += colspan as usize;
        }
    }
    widths
}

/// A cell's colspan and rowspan, read as the cell rule reads them (`html::cell_attrs`).
fn spans(cell: NodeRef<'_, Node>) -> (u32, u32) {
    let el = cell.value().as_element().expect("an element");
    let span = |name| el.attr(name).and_then(parse_int).filter(|n| (1..=1000).contains(n)).map_or(1, |n| n as u32);
    (span("colspan"), span("rowspan"))
}

/// The table's columns and their widths, from its `<colgroup>`s (`span` repeats a column).
fn columns(table: NodeRef<'_, Node>) -> Vec<Option<u32>> {
    let mut columns = Vec::new();
    for (group, _) in elements(table).filter(|(_, name)| *name == "colgroup") {
        let cols: Vec<_> = elements(group).filter(|(_, name)| *name == "col").map(|(c, _)| c).collect();
        // A colgroup without <col> children stands for `span` columns itself.
        for col in if cols.is_empty() { vec![group] } else { cols } {
            let el = col.value().as_element().expect("an element");
            let span = el.attr("span").and_then(parse_int).filter(|n| (1..=1000).contains(n)).unwrap_or(1);
            let width = el.attr("width").and_then(pixels);
            for _ in 0..span {
                if columns.len() == MAX_COLUMNS {
                    return columns;
                }
                columns.push(width);
            }
        }
    }
    columns
}

/// `120` or `120px` (what Google Docs writes); percentages and other units are not pixels.
fn pixels(v: &str) -> Option<u32> {
    let v = v.trim();
    let v = v.strip_suffix("px").unwrap_or(v);
    let n: f64 = v.parse().ok().filter(|n: &f64| n.is_finite())?;
    let n = n.round();
    (1.0..=100_000.0).contains(&n).then_some(n as u32)
}

/// `<tr>`s of this table (directly or in thead/tbody/tfoot), not of tables nested in cells.
fn rows<'a>(table: NodeRef<'a, Node>) -> impl Iterator<Item = NodeRef<'a, Node>> {
    elements(table).flat_map(|(child, name)| match name {
        "tr" => vec![child],
        "thead" | "tbody" | "tfoot" => elements(child).filter(|(_, n)| *n == "tr").map(|(r, _)| r).collect(),
        _ => vec![],
    })
}

fn elements<'a>(parent: NodeRef<'a, Node>) -> impl Iterator<Item = (NodeRef<'a, Node>, &'a str)> {
    parent.children().filter_map(|c| c.value().as_element().map(|e| (c, e.name())))
}
