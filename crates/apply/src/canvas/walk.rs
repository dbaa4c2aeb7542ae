//! The context walk (seed 002): from a target node up its conversation
//! thread, into OpenAI-style chat messages.
//!
//! The rules, and how each is decided on a drawing:
//!
//! - **Edges are thread edges or side edges.** An edge whose end at either
//!   node is the `left` or `right` side is a *side* edge: it hangs
//!   horizontal context on a node, whichever way it points. Every other
//!   edge (`top`/`bottom`) is a *thread* edge from `fromNode` (the parent)
//!   to `toNode` (the child). A side the file leaves out is the side of
//!   the node that faces the other node ([`Rect::side_facing`]), which is
//!   where Obsidian draws it.
//! - **Walk up.** The chain is the target and everything reachable from
//!   it against thread edges (all parents, so a node with two parents
//!   brings both threads), ordered parents-before-children (a depth-first
//!   post-order over parents in file order). An edge that leads back into
//!   the part of the chain being walked is a cycle: it is skipped with a
//!   warning and the walk terminates.
//! - **Horizontal context** is every node joined by a side edge to a chain
//!   node, once, placed right after the first chain node it hangs on and
//!   wrapped in `<additional-document>` tags. Context of the target comes
//!   right before the target, because the target is always last.
//! - **Siblings are excluded**: nothing is ever reached by walking *down*.
//!   [`Walk::excluded`] names every node not in the messages with the
//!   reason: `sibling_branch` (hangs below a chain node other than the
//!   target, with everything connected to it), `below_target` (the same
//!   below the target), `not_in_thread` (the rest of the canvas),
//!   `unreadable` or `empty`.
//! - **Roles** come from frontmatter (see [`super::frontmatter`]); a file
//!   node's from the Markdown file it points to, relative to the vault
//!   root. Link nodes contribute their URL; a group node contributes its
//!   label and the nodes drawn inside it (in reading order) as one user
//!   message.
//! - **Order**: system messages first (in thread order), then the rest in
//!   thread order, the target last.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::frontmatter::{self, Role};
use super::model::{Canvas, Edge, Node, NodeKind};
use super::CanvasError;

/// Vault notes larger than this are not read into a context.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// One chat message, serialised as `{"role": ..., "content": ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// Where an included node sits in the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// A node of the parent chain.
    Chain,
    /// Horizontal context of a chain node (`attached_to`).
    Context,
    /// The node the walk started from.
    Target,
}

/// A node that produced a message (same order as [`Walk::messages`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Included {
    pub node: String,
    /// The node's `type`: text, file, link or group.
    #[serde(rename = "type")]
    pub node_type: String,
    pub role: Role,
    pub placement: Placement,
    /// For context: the chain node it hangs on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attached_to: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// For a group: the nodes drawn inside it that its message contains.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
}

/// Why a node is not in the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExcludeReason {
    SiblingBranch,
    BelowTarget,
    NotInThread,
    Unreadable,
    Empty,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excluded {
    pub node: String,
    pub reason: ExcludeReason,
}

/// The result of a walk. Every node of the canvas is either in `included`
/// (or the `members` of an included group) or in `excluded`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Walk {
    pub target: String,
    pub messages: Vec<Message>,
    pub included: Vec<Included>,
    /// In canvas order.
    pub excluded: Vec<Excluded>,
    pub warnings: Vec<String>,
}

impl Walk {
    /// `{"messages": [...]}`: the body an OpenAI-style chat API takes.
    pub fn messages_json(&self) -> serde_json::Value {
        serde_json::json!({ "messages": self.messages })
    }
}

/// How an edge relates its two nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeClass {
    /// `fromNode` is a parent of `toNode` in the conversation.
    Thread,
    /// The nodes are horizontal context of each other.
    Side,
}

impl EdgeClass {
    /// The `edge.rel` of an imported canvas.
    pub fn rel(self) -> &'static str {
        match self {
            EdgeClass::Thread => "thread",
            EdgeClass::Side => "context",
        }
    }
}

/// Classify an edge; `None` when an end is missing from the canvas.
pub fn classify(canvas: &Canvas, edge: &Edge) -> Option<EdgeClass> {
    let from = canvas.node(edge.from_node())?;
    let to = canvas.node(edge.to_node())?;
    let from_side = edge
        .from_side()
        .unwrap_or_else(|| from.rect().side_facing(&to.rect()));
    let to_side = edge
        .to_side()
        .unwrap_or_else(|| to.rect().side_facing(&from.rect()));
    Some(if from_side.is_horizontal() || to_side.is_horizontal() {
        EdgeClass::Side
    } else {
        EdgeClass::Thread
    })
}

/// The vault root for a canvas file: the nearest enclosing directory with
/// an `.obsidian` folder, else the canvas's own directory.
pub fn default_vault_root(canvas_path: &Path) -> PathBuf {
    let abs = canvas_path
        .canonicalize()
        .unwrap_or_else(|_| canvas_path.to_path_buf());
    let dir = abs.parent().unwrap_or(Path::new(".")).to_path_buf();
    dir.ancestors()
        .find(|d| d.join(".obsidian").is_dir())
        .map(Path::to_path_buf)
        .unwrap_or(dir)
}

/// Adjacency by node position, every list in edge (file) order.
struct Links {
    /// `(parent, edge)` per node.
    parents: Vec<Vec<(usize, usize)>>,
    children: Vec<Vec<usize>>,
    side: Vec<Vec<usize>>,
}

impl Links {
    fn build(canvas: &Canvas, warnings: &mut Vec<String>) -> Links {
        let n = canvas.nodes().len();
        let mut links = Links {
            parents: vec![Vec::new(); n],
            children: vec![Vec::new(); n],
            side: vec![Vec::new(); n],
        };
        for (ei, edge) in canvas.edges().iter().enumerate() {
            let (Some(a), Some(b)) = (
                canvas.node_position(edge.from_node()),
                canvas.node_position(edge.to_node()),
            ) else {
                warnings.push(format!(
                    "edge '{}' joins a node that does not exist ({} -> {}); ignored",
                    edge.id(),
                    edge.from_node(),
                    edge.to_node()
                ));
                continue;
            };
            if a == b {
                continue;
            }
            match classify(canvas, edge) {
                Some(EdgeClass::Thread) => {
                    links.parents[b].push((a, ei));
                    links.children[a].push(b);
                }
                Some(EdgeClass::Side) => {
                    links.side[a].push(b);
                    links.side[b].push(a);
                }
                None => {}
            }
        }
        links
    }
}

/// The parent chain of `target`, parents before children, target last.
fn parent_chain(
    canvas: &Canvas,
    target: usize,
    links: &Links,
    warnings: &mut Vec<String>,
) -> Vec<usize> {
    const NEW: u8 = 0;
    const ACTIVE: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; canvas.nodes().len()];
    let mut order = Vec::new();
    let mut stack: Vec<(usize, usize)> = vec![(target, 0)];
    state[target] = ACTIVE;
    while let Some(top) = stack.last_mut() {
        let (v, next) = *top;
        if let Some(&(p, ei)) = links.parents[v].get(next) {
            top.1 += 1;
            match state[p] {
                NEW => {
                    state[p] = ACTIVE;
                    stack.push((p, 0));
                }
                ACTIVE => {
                    let e = &canvas.edges()[ei];
                    warnings.push(format!(
                        "cycle in the parent chain: edge '{}' ({} -> {}) leads back into the \
                         thread; ignored",
                        e.id(),
                        e.from_node(),
                        e.to_node()
                    ));
                }
                _ => {}
            }
        } else {
            state[v] = DONE;
            order.push(v);
            stack.pop();
        }
    }
    order
}

/// What a node contributes to a message.
struct Content {
    role: Role,
    tags: Vec<String>,
    body: String,
}

/// Run the walk from `target`. `vault_root` is where file nodes' paths
/// start (see [`default_vault_root`]); without one, file nodes are
/// skipped with a warning.
pub fn walk(canvas: &Canvas, target: &str, vault_root: Option<&Path>) -> Result<Walk, CanvasError> {
    canvas.require(target)?;
    let t = canvas.node_position(target).unwrap_or(0);
    let mut warnings = Vec::new();
    let links = Links::build(canvas, &mut warnings);
    let chain = parent_chain(canvas, t, &links, &mut warnings);
    let (sequence, taken) = thread_sequence(&chain, t, &links);

    // Render; groups claim the nodes drawn inside them.
    let mut render = Render {
        canvas,
        taken: &taken,
        vault_root,
        warnings: &mut warnings,
        excluded_by: HashMap::new(),
        claimed: HashSet::new(),
        rendered: Vec::new(),
    };
    for &(v, placement, attached) in &sequence {
        render.node(v, placement, attached);
    }
    let Render {
        excluded_by,
        claimed,
        rendered,
        ..
    } = render;
    let (messages, included) = in_message_order(rendered);

    let present: HashSet<usize> = taken
        .iter()
        .chain(claimed.iter())
        .copied()
        .filter(|v| !excluded_by.contains_key(v))
        .collect();
    let excluded = exclusions(canvas, t, &chain, &links, &present, excluded_by);
    Ok(Walk {
        target: target.to_string(),
        messages,
        included,
        excluded,
        warnings,
    })
}

/// Thread order: each chain node followed by its context (the side nodes
/// not yet taken); the target's context before the target. Also every
/// node the thread takes.
#[allow(clippy::type_complexity)]
fn thread_sequence(
    chain: &[usize],
    t: usize,
    links: &Links,
) -> (Vec<(usize, Placement, Option<usize>)>, HashSet<usize>) {
    let mut taken: HashSet<usize> = chain.iter().copied().collect();
    let mut sequence: Vec<(usize, Placement, Option<usize>)> = Vec::new();
    for &v in chain {
        let mut context = Vec::new();
        for &o in &links.side[v] {
            if taken.insert(o) {
                context.push((o, Placement::Context, Some(v)));
            }
        }
        if v == t {
            sequence.extend(context);
            sequence.push((v, Placement::Target, None));
        } else {
            sequence.push((v, Placement::Chain, None));
            sequence.extend(context);
        }
    }
    (sequence, taken)
}

/// The rendering of the thread's nodes, in thread order: the messages
/// (flagged when they are the target's), the nodes left out and why, and
/// the nodes groups claimed.
struct Render<'a> {
    canvas: &'a Canvas,
    taken: &'a HashSet<usize>,
    vault_root: Option<&'a Path>,
    warnings: &'a mut Vec<String>,
    excluded_by: HashMap<usize, ExcludeReason>,
    claimed: HashSet<usize>,
    rendered: Vec<(Message, Included, bool)>,
}

impl Render<'_> {
    /// Render node `v` as a message, or record why it is left out.
    fn node(&mut self, v: usize, placement: Placement, attached: Option<usize>) {
        let canvas = self.canvas;
        let nodes = canvas.nodes();
        let node = &nodes[v];
        let (content, members) = match self.content(v) {
            Ok(found) => found,
            Err(why) => {
                self.warnings
                    .push(format!("node '{}': {why}; left out", node.id()));
                self.excluded_by.insert(v, ExcludeReason::Unreadable);
                return;
            }
        };
        let body = content.body.trim();
        if body.is_empty() {
            self.warnings
                .push(format!("node '{}' has no content; left out", node.id()));
            self.excluded_by.insert(v, ExcludeReason::Empty);
            for m in &members {
                self.claimed.remove(m);
            }
            return;
        }
        let text = if placement == Placement::Context {
            format!("<additional-document>\n{body}\n</additional-document>")
        } else {
            body.to_string()
        };
        self.rendered.push((
            Message {
                role: content.role,
                content: text,
            },
            Included {
                node: node.id().to_string(),
                node_type: node.kind().type_name().to_string(),
                role: content.role,
                placement,
                attached_to: attached.map(|a| nodes[a].id().to_string()),
                tags: content.tags,
                members: members.iter().map(|&m| nodes[m].id().to_string()).collect(),
            },
            placement == Placement::Target,
        ));
    }

    /// What node `v` contributes, with the members a group claims (a
    /// node's own warnings are recorded, prefixed with its id).
    fn content(&mut self, v: usize) -> Result<(Content, Vec<usize>), String> {
        let canvas = self.canvas;
        let node = &canvas.nodes()[v];
        if node.is_group() {
            group_content(
                canvas,
                v,
                self.taken,
                &mut self.claimed,
                self.vault_root,
                self.warnings,
            )
        } else {
            node_content(node, self.vault_root).map(|(c, w)| {
                self.warnings
                    .extend(w.into_iter().map(|w| format!("node '{}': {w}", node.id())));
                (c, Vec::new())
            })
        }
    }
}

/// System messages first, then thread order, the target last; the
/// messages and the nodes they came from, in the same order.
fn in_message_order(rendered: Vec<(Message, Included, bool)>) -> (Vec<Message>, Vec<Included>) {
    let (targets, rest): (Vec<_>, Vec<_>) = rendered.into_iter().partition(|r| r.2);
    let (system, others): (Vec<_>, Vec<_>) =
        rest.into_iter().partition(|r| r.0.role == Role::System);
    let mut messages = Vec::new();
    let mut included = Vec::new();
    for (m, i, _) in system.into_iter().chain(others).chain(targets) {
        messages.push(m);
        included.push(i);
    }
    (messages, included)
}

/// Everything not `present`, with the reason it is not there: left out
/// while rendering, below the target, on a sibling branch, or not in the
/// thread at all.
fn exclusions(
    canvas: &Canvas,
    t: usize,
    chain: &[usize],
    links: &Links,
    present: &HashSet<usize>,
    excluded_by: HashMap<usize, ExcludeReason>,
) -> Vec<Excluded> {
    let nodes = canvas.nodes();
    let mut reason: HashMap<usize, ExcludeReason> = excluded_by;
    let below: Vec<usize> = links.children[t].clone();
    let siblings: Vec<usize> = chain
        .iter()
        .filter(|&&v| v != t)
        .flat_map(|&v| links.children[v].iter().copied())
        .collect();
    for (seeds, why) in [
        (below, ExcludeReason::BelowTarget),
        (siblings, ExcludeReason::SiblingBranch),
    ] {
        let mut stack: Vec<usize> = seeds;
        while let Some(v) = stack.pop() {
            if present.contains(&v) || reason.contains_key(&v) {
                continue;
            }
            reason.insert(v, why);
            for (p, _) in &links.parents[v] {
                stack.push(*p);
            }
            stack.extend(links.children[v].iter().copied());
            stack.extend(links.side[v].iter().copied());
        }
    }
    (0..nodes.len())
        .filter(|v| !present.contains(v))
        .map(|v| Excluded {
            node: nodes[v].id().to_string(),
            reason: reason
                .get(&v)
                .copied()
                .unwrap_or(ExcludeReason::NotInThread),
        })
        .collect()
}

/// A group's message: its label, then the nodes drawn inside it (not
/// groups, not already in the thread, not claimed by an earlier group) in
/// reading order (top to bottom, left to right).
fn group_content(
    canvas: &Canvas,
    g: usize,
    taken: &HashSet<usize>,
    claimed: &mut HashSet<usize>,
    vault_root: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Result<(Content, Vec<usize>), String> {
    let nodes = canvas.nodes();
    let group = &nodes[g];
    let area = group.rect();
    let mut inside: Vec<usize> = (0..nodes.len())
        .filter(|&v| {
            v != g
                && !nodes[v].is_group()
                && !taken.contains(&v)
                && !claimed.contains(&v)
                && area.contains(&nodes[v].rect())
        })
        .collect();
    inside.sort_by(|&a, &b| {
        let (ra, rb) = (nodes[a].rect(), nodes[b].rect());
        ra.y.total_cmp(&rb.y)
            .then(ra.x.total_cmp(&rb.x))
            .then(a.cmp(&b))
    });
    let mut parts = Vec::new();
    if let NodeKind::Group { label: Some(l) } = group.kind() {
        if !l.trim().is_empty() {
            parts.push(l.trim().to_string());
        }
    }
    let mut members = Vec::new();
    for v in inside {
        let member = &nodes[v];
        match node_content(member, vault_root) {
            Ok((c, w)) => {
                warnings.extend(
                    w.into_iter()
                        .map(|w| format!("node '{}': {w}", member.id())),
                );
                claimed.insert(v);
                members.push(v);
                let body = c.body.trim();
                if !body.is_empty() {
                    parts.push(body.to_string());
                }
            }
            Err(why) => warnings.push(format!(
                "node '{}' (in group '{}'): {why}; left out",
                member.id(),
                group.id()
            )),
        }
    }
    Ok((
        Content {
            role: Role::User,
            tags: Vec::new(),
            body: parts.join("\n\n"),
        },
        members,
    ))
}

/// Role, tags and text of one (non-group) node, with warnings; `Err` when
/// it cannot be read at all.
fn node_content(node: &Node, vault_root: Option<&Path>) -> Result<(Content, Vec<String>), String> {
    match node.kind() {
        NodeKind::Text { text } => {
            let p = frontmatter::parse(text);
            Ok((
                Content {
                    role: p.role,
                    tags: p.tags,
                    body: p.body.to_string(),
                },
                p.warnings,
            ))
        }
        NodeKind::Link { url } => Ok((
            Content {
                role: Role::User,
                tags: Vec::new(),
                body: url.clone(),
            },
            Vec::new(),
        )),
        NodeKind::File { file, subpath } => {
            let root = vault_root.ok_or("no vault root to find its file in")?;
            let text = read_vault_file(root, file)?;
            let markdown = is_markdown(file);
            let mut warnings = Vec::new();
            let (role, tags, body) = if markdown {
                let p = frontmatter::parse(&text);
                warnings.extend(p.warnings.into_iter().map(|w| format!("{file}: {w}")));
                (p.role, p.tags, p.body.to_string())
            } else {
                (Role::User, Vec::new(), text.clone())
            };
            let body = match subpath.as_deref().filter(|s| !s.is_empty()) {
                Some(sub) if markdown => match heading_of(sub).and_then(|h| section(&body, h)) {
                    Some(s) => s.to_string(),
                    None => {
                        warnings.push(format!(
                            "subpath '{sub}' not found in {file}; the whole file is used"
                        ));
                        body
                    }
                },
                Some(sub) => {
                    warnings.push(format!(
                        "subpath '{sub}' of a file that is not Markdown; the whole file is used"
                    ));
                    body
                }
                None => body,
            };
            Ok((Content { role, tags, body }, warnings))
        }
        NodeKind::Group { .. } => Err("a group inside a group".into()),
        NodeKind::Other(t) => Err(format!("node type '{t}' has no text graphctx can read")),
    }
}

pub(crate) fn is_markdown(file: &str) -> bool {
    let lower = file.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// A vault file's text. Paths that leave the vault (absolute, `..`) are
/// refused, and so are binary files and files over [`MAX_FILE_BYTES`].
pub fn read_vault_file(root: &Path, file: &str) -> Result<String, String> {
    let rel = Path::new(file);
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!("file path '{file}' leaves the vault"));
    }
    let path = root.join(rel);
    let meta = std::fs::metadata(&path).map_err(|e| format!("cannot read {file}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{file} is not a file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{file} has {} bytes, more than the {MAX_FILE_BYTES} read into a context",
            meta.len()
        ));
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {file}: {e}"))?;
    if bytes.contains(&0) {
        return Err(format!("{file} is a binary file"));
    }
    String::from_utf8(bytes).map_err(|_| format!("{file} is not UTF-8 text"))
}

/// The heading a subpath names: `#A#B` → `B`; block references (`#^id`)
/// name none.
fn heading_of(subpath: &str) -> Option<&str> {
    let last = subpath.rsplit('#').next()?.trim();
    (!last.is_empty() && !last.starts_with('^')).then_some(last)
}

/// The section under a Markdown heading: from the heading line to the next
/// heading of the same or a higher level.
fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let mut start: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some((level, title)) = heading_line(line) {
            match start {
                None if title == heading => start = Some((offset, level)),
                Some((s, l)) if level <= l => return Some(&text[s..offset]),
                _ => {}
            }
        }
        offset += line.len();
    }
    start.map(|(s, _)| &text[s..])
}

fn heading_line(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_end();
    let level = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_by_heading() {
        let text = "intro\n# A\na1\n## B\nb1\n# C\nc1\n";
        assert_eq!(section(text, "A"), Some("# A\na1\n## B\nb1\n"));
        assert_eq!(section(text, "B"), Some("## B\nb1\n"));
        assert_eq!(section(text, "C"), Some("# C\nc1\n"));
        assert_eq!(section(text, "D"), None);
        assert_eq!(heading_of("#A#B"), Some("B"));
        assert_eq!(heading_of("#^block"), None);
    }

    #[test]
    fn vault_paths_stay_inside() {
        let root = Path::new("/nonexistent");
        assert!(read_vault_file(root, "../etc/passwd")
            .unwrap_err()
            .contains("leaves the vault"));
        assert!(read_vault_file(root, "/etc/passwd")
            .unwrap_err()
            .contains("leaves the vault"));
    }
}
