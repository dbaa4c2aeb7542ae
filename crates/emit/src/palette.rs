//! The colours of every picture graphctx draws.
//!
//! Mermaid and DOT diagrams and the HTML viewer colour a node by its kind
//! (or, in an ontology, by its type), a node's outline by its priority tier
//! and an edge by its relationship. One table here keeps the three
//! renderings agreeing, so a reader who learnt the colours in a pull
//! request's diagram reads the viewer the same way.

/// Fill colour of a code entity's node, by its stored kind name
/// (`function`, `method`, `struct`, …). Unknown kinds (ontology types,
/// canvas node types) take a colour from [`hashed_fill`].
pub fn kind_fill(kind: &str) -> &'static str {
    match kind {
        "function" => "#cfe8ff",
        "method" => "#dcecff",
        "struct" => "#d8f5d0",
        "enum" => "#e6f5c9",
        "union" => "#eef5d0",
        "trait" => "#f9e1b5",
        "impl" => "#f3ead8",
        "module" => "#e4e4e4",
        "const" | "static" => "#f0d9f5",
        "type_alias" => "#e9def7",
        "macro" => "#ffd9d9",
        other => hashed_fill(other),
    }
}

/// Light fills for kinds that have no fixed colour (an ontology's node
/// types): the same type always gets the same colour.
const HASHED_FILLS: [&str; 10] = [
    "#cfe8ff", "#d8f5d0", "#f9e1b5", "#f0d9f5", "#ffd9d9", "#d9f2f2", "#f5f0c8", "#e4e4e4",
    "#e9def7", "#f7dccb",
];

/// A stable colour for any type name (FNV-1a of its bytes).
pub fn hashed_fill(name: &str) -> &'static str {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    HASHED_FILLS[(h as usize) % HASHED_FILLS.len()]
}

/// Stroke colour and width of a node by its priority tier (1 = base
/// entities and their direct neighbours … 3 = the rest); base entities
/// are drawn with [`BASE_STROKE`].
pub fn tier_stroke(tier: u8) -> (&'static str, f32) {
    match tier {
        0 | 1 => ("#1f4e8c", 2.0),
        2 => ("#5a6f8c", 1.2),
        _ => ("#9aa5b1", 0.8),
    }
}

/// The outline of a base entity: the entity a context was asked for.
pub const BASE_STROKE: (&str, f32) = ("#d1400f", 3.0);

/// Colour of an edge by its relationship's stored name.
pub fn rel_colour(rel: &str) -> &'static str {
    match rel {
        "calls" => "#1f6feb",
        "uses_type" => "#2da44e",
        "implements" => "#bf8700",
        "contains" => "#8c959f",
        "imports" => "#8250df",
        "tests" => "#cf222e",
        "references" => "#57606a",
        // Ontology relationships.
        "compose" => "#8c959f",
        "io" => "#1f6feb",
        "satisfy" => "#2da44e",
        "verify" => "#cf222e",
        "allocate" => "#bf8700",
        "derive" | "refine" => "#8250df",
        _ => "#57606a",
    }
}

/// Colour of an edge that lies on a dependency cycle.
pub const CYCLE_EDGE: &str = "#e5534b";

/// A note in a picture (what a budget left out, why it is empty): fill
/// and dashed outline.
pub const NOTE_FILL: &str = "#fff8c5";
pub const NOTE_STROKE: &str = "#9a6700";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_without_a_fixed_colour_always_gets_the_same_one() {
        assert_eq!(kind_fill("Person"), kind_fill("Person"));
        assert!(HASHED_FILLS.contains(&kind_fill("Person")));
        assert_eq!(kind_fill("function"), "#cfe8ff");
    }
}
