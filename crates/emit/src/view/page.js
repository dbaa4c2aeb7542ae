// The graphctx viewer: one canvas, a layout computed once, filters that
// only change what is drawn. Everything put into the page's text comes
// from the embedded JSON and goes through textContent, never innerHTML.
(function () {
  'use strict';
  performance.mark('graphctx:start');
  var data = JSON.parse(document.getElementById('graph-data').textContent);
  var nodes = data.nodes;
  var edges = data.edges;
  var pal = data.palette;
  var N = nodes.length;
  var body = document.body;
  var $ = function (id) { return document.getElementById(id); };

  // ---- adjacency ------------------------------------------------------
  var incident = [];
  for (var i = 0; i < N; i++) incident.push([]);
  edges.forEach(function (e, ei) {
    incident[e.source].push(ei);
    if (e.target !== e.source) incident[e.target].push(ei);
  });
  var onCycle = new Uint8Array(N);
  var cycleEdges = 0;
  edges.forEach(function (e) {
    if (e.cycle) { onCycle[e.source] = 1; onCycle[e.target] = 1; cycleEdges++; }
  });
  var byKey = new Map();
  nodes.forEach(function (n, idx) { byKey.set(n.key, idx); });
  var bases = [];
  nodes.forEach(function (n, idx) { if (n.base) bases.push(idx); });

  // ---- layout: radial rings by hop distance, per connected component ---
  var X = new Float64Array(N), Y = new Float64Array(N);
  var R = new Float64Array(N);
  var SPACING = 26, RING_GAP = 90, COMPONENT_GAP = 80;
  for (i = 0; i < N; i++) R[i] = nodes[i].base ? 9 : 6;

  function other(e, idx) { return e.source === idx ? e.target : e.source; }

  function components() {
    var comp = new Int32Array(N).fill(-1), list = [];
    for (var s = 0; s < N; s++) {
      if (comp[s] >= 0) continue;
      var members = [s], c = list.length;
      comp[s] = c;
      for (var h = 0; h < members.length; h++) {
        var v = members[h];
        incident[v].forEach(function (ei) {
          var w = other(edges[ei], v);
          if (comp[w] < 0) { comp[w] = c; members.push(w); }
        });
      }
      list.push(members);
    }
    return list;
  }

  // Lays one component out around its roots (its base nodes, or its node
  // with most edges); returns its radius. Positions are relative to 0,0.
  function layoutComponent(members) {
    var roots = members.filter(function (v) { return nodes[v].base; });
    if (roots.length === 0) {
      var best = members[0];
      members.forEach(function (v) { if (incident[v].length > incident[best].length) best = v; });
      roots = [best];
    }
    var level = new Map(), rings = [roots.slice()];
    roots.forEach(function (v) { level.set(v, 0); });
    for (var k = 0; k < rings.length; k++) {
      var next = [];
      rings[k].forEach(function (v) {
        incident[v].forEach(function (ei) {
          var w = other(edges[ei], v);
          if (!level.has(w)) { level.set(w, k + 1); next.push(w); }
        });
      });
      if (next.length) rings.push(next);
    }
    var angle = new Map(), radius = 0;
    rings.forEach(function (ring, k) {
      var start = -Math.PI / 2;
      if (k > 0) {
        // Order a ring by the mean angle of its neighbours one ring in.
        var want = new Map();
        ring.forEach(function (v) {
          var sx = 0, sy = 0;
          incident[v].forEach(function (ei) {
            var w = other(edges[ei], v);
            if (level.get(w) === k - 1) { sx += Math.cos(angle.get(w)); sy += Math.sin(angle.get(w)); }
          });
          want.set(v, Math.atan2(sy, sx));
        });
        ring.sort(function (a, b) { return want.get(a) - want.get(b); });
        start = want.get(ring[0]);
      }
      // A ring too long for its radius is spread over several radii, the
      // nodes alternating between them: a disc, not one huge circle.
      var r0 = k > 0 ? radius + RING_GAP
        : (ring.length === 1 ? 0 : Math.min(ring.length * SPACING / (2 * Math.PI), 3 * RING_GAP));
      var layers = r0 === 0 ? 1 : Math.max(1, Math.ceil(ring.length * SPACING / (2 * Math.PI * r0)));
      ring.forEach(function (v, j) {
        var a = start + 2 * Math.PI * j / ring.length;
        var r = r0 + (j % layers) * SPACING;
        angle.set(v, a);
        X[v] = r * Math.cos(a);
        Y[v] = r * Math.sin(a);
      });
      radius = r0 + (layers - 1) * SPACING;
    });
    return radius + 40;
  }

  var layoutStart = performance.now();
  var comps = components().sort(function (a, b) { return b.length - a.length; });
  var sizes = comps.map(layoutComponent);
  // Shelf packing of the components, largest first.
  var totalArea = sizes.reduce(function (s, r) { return s + 4 * r * r; }, 0);
  var rowWidth = Math.max(Math.sqrt(totalArea) * 1.3, sizes.length ? 2 * sizes[0] : 0);
  var cx = 0, cy = 0, rowHeight = 0;
  comps.forEach(function (members, c) {
    var d = 2 * sizes[c];
    if (cx > 0 && cx + d > rowWidth) { cx = 0; cy += rowHeight + COMPONENT_GAP; rowHeight = 0; }
    var ox = cx + sizes[c], oy = cy + sizes[c];
    members.forEach(function (v) { X[v] += ox; Y[v] += oy; });
    cx += d + COMPONENT_GAP;
    rowHeight = Math.max(rowHeight, d);
  });
  // A grid over the positions, for hit tests.
  var CELL = 40, grid = new Map();
  function cellKey(gx, gy) { return gx + ',' + gy; }
  for (i = 0; i < N; i++) {
    var ck = cellKey(Math.floor(X[i] / CELL), Math.floor(Y[i] / CELL));
    if (!grid.has(ck)) grid.set(ck, []);
    grid.get(ck).push(i);
  }
  var layoutMs = performance.now() - layoutStart;
  performance.mark('graphctx:laid-out');

  // ---- filters --------------------------------------------------------
  var relNames = [];
  var relCount = new Map();
  edges.forEach(function (e) {
    if (!relCount.has(e.rel)) { relCount.set(e.rel, 0); relNames.push(e.rel); }
    relCount.set(e.rel, relCount.get(e.rel) + 1);
  });
  relNames.sort();
  var relOn = new Map(relNames.map(function (r) { return [r, true]; }));
  var maxHopsShown = -1; // -1: every hop
  var hopsFromSelected = false;
  var highlightCycles = true;
  var visible = new Uint8Array(N).fill(1);
  var hopOf = new Int32Array(N).fill(-1);
  var selected = -1;

  function hopOrigin() {
    if (hopsFromSelected && selected >= 0) return [selected];
    return bases;
  }

  // Hop distances from the origin over the relationships switched on;
  // nodes further than the hop limit (or unreachable) are hidden.
  function applyFilters() {
    var origin = hopOrigin();
    hopOf.fill(-1);
    var queue = origin.slice();
    origin.forEach(function (v) { hopOf[v] = 0; });
    for (var h = 0; h < queue.length; h++) {
      var v = queue[h];
      incident[v].forEach(function (ei) {
        var e = edges[ei];
        if (!relOn.get(e.rel)) return;
        var w = other(e, v);
        if (hopOf[w] < 0) { hopOf[w] = hopOf[v] + 1; queue.push(w); }
      });
    }
    var limited = origin.length > 0 && maxHopsShown >= 0;
    for (var n = 0; n < N; n++) visible[n] = (!limited || (hopOf[n] >= 0 && hopOf[n] <= maxHopsShown)) ? 1 : 0;
    var deepest = 0;
    for (n = 0; n < N; n++) if (hopOf[n] > deepest) deepest = hopOf[n];
    var slider = $('hops');
    slider.disabled = origin.length === 0;
    slider.max = String(deepest);
    slider.value = String(maxHopsShown < 0 ? deepest : Math.min(maxHopsShown, deepest));
    $('hops-value').textContent = origin.length === 0 ? 'no base: select a node'
      : (maxHopsShown < 0 || maxHopsShown >= deepest ? 'all (' + deepest + ')' : String(maxHopsShown));
    $('hop-origin').textContent = (hopsFromSelected && selected >= 0) ? 'the selected node' : 'the base';
    requestDraw();
  }

  // ---- drawing --------------------------------------------------------
  var canvas = $('canvas'), ctx = canvas.getContext('2d');
  var view = { k: 1, x: 0, y: 0 };
  var width = 0, height = 0, dpr = 1;
  var pending = false;

  function resize() {
    var rect = canvas.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    width = Math.max(1, rect.width);
    height = Math.max(1, rect.height);
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
  }

  function fit() {
    var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity, any = false;
    for (var n = 0; n < N; n++) {
      if (!visible[n]) continue;
      any = true;
      minX = Math.min(minX, X[n] - R[n]); maxX = Math.max(maxX, X[n] + R[n]);
      minY = Math.min(minY, Y[n] - R[n]); maxY = Math.max(maxY, Y[n] + R[n]);
    }
    if (!any) { view = { k: 1, x: width / 2, y: height / 2 }; return; }
    var pad = 40;
    var k = Math.min((width - 2 * pad) / Math.max(maxX - minX, 1), (height - 2 * pad) / Math.max(maxY - minY, 1));
    k = Math.max(Math.min(k, 2.5), 0.01);
    view = { k: k, x: width / 2 - k * (minX + maxX) / 2, y: height / 2 - k * (minY + maxY) / 2 };
  }

  function requestDraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; draw(); });
  }

  function tierStroke(n) {
    if (n.base) return pal.base;
    return pal.tiers[String(n.tier)] || pal.tiers['3'];
  }

  function strokeEdges(list, colour, lineWidth, arrows) {
    if (!list.length) return;
    ctx.beginPath();
    var head = 7 / Math.max(view.k, 0.5);
    list.forEach(function (ei) {
      var e = edges[ei], s = e.source, t = e.target;
      if (s === t) {
        ctx.moveTo(X[s] + R[s], Y[s]);
        ctx.arc(X[s] + R[s], Y[s] - R[s], R[s], Math.PI / 2, Math.PI * 2.4);
        return;
      }
      var dx = X[t] - X[s], dy = Y[t] - Y[s], len = Math.hypot(dx, dy) || 1;
      var ux = dx / len, uy = dy / len;
      var ex = X[t] - ux * R[t], ey = Y[t] - uy * R[t];
      ctx.moveTo(X[s] + ux * R[s], Y[s] + uy * R[s]);
      ctx.lineTo(ex, ey);
      if (arrows) {
        ctx.moveTo(ex - head * (ux - uy * 0.5), ey - head * (uy + ux * 0.5));
        ctx.lineTo(ex, ey);
        ctx.lineTo(ex - head * (ux + uy * 0.5), ey - head * (uy - ux * 0.5));
      }
    });
    ctx.strokeStyle = colour;
    ctx.lineWidth = lineWidth / view.k;
    ctx.stroke();
  }

  function inView(n, margin) {
    var sx = X[n] * view.k + view.x, sy = Y[n] * view.k + view.y;
    return sx > -margin && sy > -margin && sx < width + margin && sy < height + margin;
  }

  function draw() {
    var began = performance.now();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.setTransform(dpr * view.k, 0, 0, dpr * view.k, dpr * view.x, dpr * view.y);
    var drawnEdges = 0;
    var byRel = new Map(), cyc = [], sel = [];
    var arrows = view.k > 0.35 && edges.length < 6000;
    edges.forEach(function (e, ei) {
      if (!relOn.get(e.rel) || !visible[e.source] || !visible[e.target]) return;
      if (!inView(e.source, width) && !inView(e.target, width)) return;
      drawnEdges++;
      if (e.source === selected || e.target === selected) sel.push(ei);
      else if (highlightCycles && e.cycle) cyc.push(ei);
      else {
        if (!byRel.has(e.rel)) byRel.set(e.rel, []);
        byRel.get(e.rel).push(ei);
      }
    });
    ctx.globalAlpha = selected >= 0 || drawnEdges > 1500 ? 0.35 : 0.8;
    byRel.forEach(function (list, rel) { strokeEdges(list, pal.rels[rel] || pal.rels['*'], 1, arrows); });
    ctx.globalAlpha = 1;
    strokeEdges(cyc, pal.cycle, 2.2, arrows);
    sel.forEach(function (ei) {
      var e = edges[ei];
      strokeEdges([ei], highlightCycles && e.cycle ? pal.cycle : (pal.rels[e.rel] || pal.rels['*']), 2.6, true);
    });

    // Nodes, one path per fill colour and one per outline.
    var drawn = [], byFill = new Map(), byStroke = new Map();
    for (var n = 0; n < N; n++) {
      if (!visible[n] || !inView(n, 20)) continue;
      drawn.push(n);
      var fill = pal.kinds[nodes[n].kind] || '#e4e4e4';
      if (!byFill.has(fill)) byFill.set(fill, []);
      byFill.get(fill).push(n);
      var st = tierStroke(nodes[n]);
      var sk = st.colour + ' ' + st.width;
      if (!byStroke.has(sk)) byStroke.set(sk, { st: st, list: [] });
      byStroke.get(sk).list.push(n);
    }
    function circles(list, extra) {
      ctx.beginPath();
      // Never smaller than a few pixels, however far out the zoom.
      var least = 2.5 / view.k;
      list.forEach(function (v) {
        var r = Math.max(R[v], least) + extra;
        ctx.moveTo(X[v] + r, Y[v]);
        ctx.arc(X[v], Y[v], r, 0, 2 * Math.PI);
      });
    }
    if (highlightCycles) {
      var ringed = drawn.filter(function (v) { return onCycle[v]; });
      circles(ringed, 3.5);
      ctx.strokeStyle = pal.cycle;
      ctx.lineWidth = 2.5 / Math.max(view.k, 0.3);
      ctx.stroke();
    }
    byFill.forEach(function (list, fill) { circles(list, 0); ctx.fillStyle = fill; ctx.fill(); });
    byStroke.forEach(function (g) { circles(g.list, 0); ctx.strokeStyle = g.st.colour; ctx.lineWidth = g.st.width / Math.max(view.k, 0.5); ctx.stroke(); });
    if (selected >= 0 && visible[selected]) {
      circles([selected], 5);
      ctx.strokeStyle = '#1f2328';
      ctx.lineWidth = 2 / view.k;
      ctx.stroke();
    }
    // Labels once they are large enough to read, and not too many.
    // Otherwise those of the base, the selected node and its neighbours.
    var labelled = drawn;
    if (view.k * 11 < 7 || drawn.length > 1500) {
      var keep = new Set(bases.length <= 40 ? bases : []);
      if (selected >= 0) {
        keep.add(selected);
        incident[selected].forEach(function (ei) { keep.add(other(edges[ei], selected)); });
      }
      labelled = drawn.filter(function (v) { return keep.has(v); });
    }
    ctx.font = (11 / view.k) + 'px system-ui, sans-serif';
    ctx.fillStyle = '#1f2328';
    ctx.textBaseline = 'middle';
    labelled.forEach(function (v) {
      ctx.fillText(nodes[v].name, X[v] + Math.max(R[v], 2.5 / view.k) + 3 / view.k, Y[v]);
    });
    body.dataset.renderedNodes = String(drawn.length);
    body.dataset.renderedEdges = String(drawnEdges);
    body.dataset.drawMs = (performance.now() - began).toFixed(2);
  }

  // ---- details --------------------------------------------------------
  function location(n) {
    if (!n.file) return '';
    if (!n.lines) return n.file;
    return n.file + ':' + n.lines[0] + (n.lines[1] !== n.lines[0] ? '-' + n.lines[1] : '');
  }

  function relTag(rel, cycle) {
    var tag = document.createElement('span');
    tag.className = 'rel';
    tag.style.background = cycle ? pal.cycle : (pal.rels[rel] || pal.rels['*']);
    tag.textContent = rel;
    return tag;
  }

  function select(idx, centre) {
    selected = idx;
    var n = nodes[idx];
    $('d-hint').hidden = true;
    $('d-body').hidden = false;
    $('d-name').textContent = n.name;
    $('d-caption').textContent = n.caption || '';
    $('d-kind').textContent = n.kind + (n.base ? ' · base' : '') + ' · tier ' + n.tier + (onCycle[idx] ? ' · on a cycle' : '');
    $('d-key').textContent = n.key;
    $('d-location').textContent = location(n);
    $('d-signature').textContent = n.signature || '—';
    $('d-doc').textContent = n.doc || '—';
    var list = $('d-neighbours');
    list.replaceChildren();
    incident[idx].forEach(function (ei) {
      var e = edges[ei], w = other(e, idx);
      var li = document.createElement('li');
      var b = document.createElement('button');
      b.type = 'button';
      b.appendChild(relTag(e.rel, e.cycle));
      b.appendChild(document.createTextNode((e.source === idx ? '→ ' : '← ') + nodes[w].name));
      b.title = nodes[w].key;
      b.addEventListener('click', function () { select(w, true); });
      li.appendChild(b);
      list.appendChild(li);
    });
    if (!incident[idx].length) {
      var none = document.createElement('li');
      none.textContent = 'none';
      list.appendChild(none);
    }
    body.dataset.selected = n.key;
    if (centre) { view.x = width / 2 - view.k * X[idx]; view.y = height / 2 - view.k * Y[idx]; }
    if (hopsFromSelected) applyFilters(); else requestDraw();
  }

  function nodeAt(sx, sy) {
    var wx = (sx - view.x) / view.k, wy = (sy - view.y) / view.k;
    var tol = Math.max(4 / view.k, 0);
    var best = -1, bestD = Infinity;
    var gx = Math.floor(wx / CELL), gy = Math.floor(wy / CELL);
    var reach = Math.ceil((12 + tol) / CELL);
    for (var dx = -reach; dx <= reach; dx++) {
      for (var dy = -reach; dy <= reach; dy++) {
        var cell = grid.get(cellKey(gx + dx, gy + dy));
        if (!cell) continue;
        cell.forEach(function (v) {
          if (!visible[v]) return;
          var d = Math.hypot(X[v] - wx, Y[v] - wy);
          if (d <= R[v] + tol && d < bestD) { best = v; bestD = d; }
        });
      }
    }
    return best;
  }

  // ---- interaction ----------------------------------------------------
  var drag = null;
  canvas.addEventListener('pointerdown', function (ev) {
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false };
    canvas.setPointerCapture && canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener('pointermove', function (ev) {
    if (!drag) {
      var rect = canvas.getBoundingClientRect();
      canvas.classList.toggle('over', nodeAt(ev.clientX - rect.left, ev.clientY - rect.top) >= 0);
      return;
    }
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 4) { drag.moved = true; canvas.classList.add('dragging'); }
    if (drag.moved) { view.x = drag.vx + dx; view.y = drag.vy + dy; requestDraw(); }
  });
  canvas.addEventListener('pointerup', function () {
    canvas.classList.remove('dragging');
    if (drag && drag.moved) canvas.dataset.dragged = '1';
    drag = null;
  });
  canvas.addEventListener('click', function (ev) {
    if (canvas.dataset.dragged) { delete canvas.dataset.dragged; return; }
    var rect = canvas.getBoundingClientRect();
    var hit = nodeAt(ev.clientX - rect.left, ev.clientY - rect.top);
    if (hit >= 0) select(hit, false);
  });
  canvas.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var rect = canvas.getBoundingClientRect();
    var sx = ev.clientX - rect.left, sy = ev.clientY - rect.top;
    var f = Math.exp(-ev.deltaY * 0.0015);
    var k = Math.min(Math.max(view.k * f, 0.005), 20);
    view.x = sx - (sx - view.x) * k / view.k;
    view.y = sy - (sy - view.y) * k / view.k;
    view.k = k;
    requestDraw();
  }, { passive: false });
  window.addEventListener('resize', function () { resize(); requestDraw(); });
  window.addEventListener('keydown', function (ev) {
    if (ev.target && ev.target.tagName === 'INPUT') return;
    if (ev.key === 'f' || ev.key === 'F') { fit(); requestDraw(); }
  });
  $('fit').addEventListener('click', function () { fit(); requestDraw(); });
  $('find').addEventListener('keydown', function (ev) {
    if (ev.key !== 'Enter') return;
    var q = ev.target.value.trim().toLowerCase();
    if (!q) return;
    for (var n = 0; n < N; n++) {
      if (nodes[n].name.toLowerCase().indexOf(q) >= 0 || nodes[n].key.toLowerCase() === q) {
        if (!visible[n]) { maxHopsShown = -1; applyFilters(); }
        select(n, true);
        return;
      }
    }
  });
  $('hops').addEventListener('input', function (ev) {
    var v = Number(ev.target.value);
    maxHopsShown = v >= Number(ev.target.max) ? -1 : v;
    applyFilters();
  });
  $('from-selected').addEventListener('change', function (ev) { hopsFromSelected = ev.target.checked; applyFilters(); });
  $('cycles').addEventListener('change', function (ev) { highlightCycles = ev.target.checked; requestDraw(); });

  // ---- side panel contents ---------------------------------------------
  function legendRow(parent, swatchClass, colour, text, control) {
    var row = document.createElement(control ? 'label' : 'div');
    row.className = 'kind-row';
    if (control) row.appendChild(control);
    var sw = document.createElement('span');
    sw.className = swatchClass;
    sw.style.background = colour;
    row.appendChild(sw);
    row.appendChild(document.createTextNode(text));
    parent.appendChild(row);
  }
  relNames.forEach(function (rel) {
    var box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = true;
    box.dataset.rel = rel;
    box.addEventListener('change', function () { relOn.set(rel, box.checked); applyFilters(); });
    legendRow($('rels'), 'line', pal.rels[rel] || pal.rels['*'], rel + ' (' + relCount.get(rel) + ')', box);
  });
  if (!relNames.length) $('rels').textContent = 'none';
  var kindCount = new Map();
  nodes.forEach(function (n) { kindCount.set(n.kind, (kindCount.get(n.kind) || 0) + 1); });
  Array.from(kindCount.keys()).sort().forEach(function (kind) {
    legendRow($('kinds'), 'swatch', pal.kinds[kind] || '#e4e4e4', kind + ' (' + kindCount.get(kind) + ')', null);
  });
  $('cycle-count').textContent = cycleEdges ? cycleEdges + ' edges on cycles' : 'no cycles';
  if (data.note) { $('note-section').hidden = false; $('note').textContent = data.note; }
  $('title').textContent = data.title;
  document.title = data.title + ' — graphctx view';
  $('summary').textContent = N + (N === 1 ? ' node, ' : ' nodes, ') + edges.length + (edges.length === 1 ? ' edge' : ' edges');
  if (N === 0) {
    $('empty').hidden = false;
    $('empty').textContent = data.empty_text || 'The selection is empty.';
  }

  // ---- first render, and the hooks the tests use ------------------------
  // The fragment may set filters (#hops=1&rels=calls,uses_type) and click
  // a node (#click=KEY) the way a pointer would, at its place on screen.
  var hash = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  if (hash.has('rels')) {
    var wanted = hash.get('rels').split(',');
    relNames.forEach(function (r) { relOn.set(r, wanted.indexOf(r) >= 0); });
    document.querySelectorAll('#rels input').forEach(function (b) { b.checked = relOn.get(b.dataset.rel); });
  }
  if (hash.has('hops')) maxHopsShown = Number(hash.get('hops'));
  resize();
  applyFilters();
  fit();
  pending = false;
  draw();
  performance.mark('graphctx:rendered');
  var measure = performance.measure('graphctx:first-render', { start: 0, end: 'graphctx:rendered' });
  body.dataset.layoutMs = layoutMs.toFixed(1);
  body.dataset.firstRenderMs = measure.duration.toFixed(1);
  body.dataset.totalNodes = String(N);
  if (hash.has('click')) {
    var target = byKey.get(hash.get('click'));
    if (target === undefined) {
      body.dataset.clickError = 'no node with this key';
    } else {
      var rect = canvas.getBoundingClientRect();
      var init = { bubbles: true, clientX: rect.left + view.x + view.k * X[target], clientY: rect.top + view.y + view.k * Y[target] };
      canvas.dispatchEvent(new MouseEvent('click', init));
      pending = false;
      draw();
    }
  }
  body.dataset.ready = '1';
}());
