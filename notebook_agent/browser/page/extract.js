// notebook_agent extraction: reads a table or a repeated list from the DOM exactly, for extract.py.
//
// Composed with snapshot.js into the one content-script selector engine page_script.py registers, so it runs in
// Playwright's isolated world of every frame like the page script: a page that hooks ``innerText``,
// ``textContent``, ``querySelectorAll`` or ``JSON`` in its own world changes nothing read here. Ops named
// "extract:..." are answered here; every other op goes on to the page script unchanged. Same conventions as
// snapshot.js: element ops answer with the element or with nothing, every other op with a detached element
// whose text is the JSON result.
//
// A read is found from an element (the scope of "extract:mark", remembered under a token ``k``), then found
// again by token or, once that element left the document (a re-render, the next page's document), by the
// descriptor the first read returned: {kind, tag, id, path, n, isig, csig}.
//
// Ops:  extract:mark  {k}                 (element op, scoped) remember the scope element under k
//       extract:read  {k, kind, desc?, maxRows, maxRaw, start?, data?}
//             -> table: {kind, desc, label, rows, next, total, capped}
//                rows: [[group, isHeader, isHidden, [[text] | [text, colspan, rowspan, href|null], ...]], ...]
//             -> items: {kind, desc, label, items: [[[key, value], ...]], next, total, capped}
//             ``next``: not null when the read stopped for time; read again from there (start=next).
//       extract:probe {k, desc}             -> {n, sig} (how many rows, and what the first and last say)
//       extract:nextInfo {k, desc}          -> {found, disabled, text}: the next-page control of the target
//       extract:next {k, desc}              (element op) that control
//       extract:end  {k, desc}              scroll the target's scroller (or the page) to its end -> {n}
//       error answers: {error: "none"} nothing readable at the element, {error: "gone"} target not found
((page) => {
  const PREFIX = "extract:";
  const ELEMENT_OPS = new Set(["extract:mark", "extract:next"]);
  let api = null;
  return {
    queryAll(root, body) {
      const arg = JSON.parse(atob(body));
      if (!arg || typeof arg.op !== "string" || !arg.op.startsWith(PREFIX)) return page.queryAll(root, body);
      if (!api) api = makeApi();
      const res = api.call(arg, root);
      if (ELEMENT_OPS.has(arg.op)) return res && typeof res === "object" && res.nodeType === 1 ? [res] : [];
      const out = document.createElement("div");
      out.textContent = JSON.stringify(res === undefined ? null : res);
      return [out];
    },
  };

  function makeApi() {
    const TABLE_SEL = "table, [role=table], [role=grid], [role=treegrid]";
    const CELL_SEL = "[role=cell], [role=gridcell], [role=columnheader], [role=rowheader]";
    // Subtrees that are controls or not text: their words are not an item's data.
    const SKIP = new Set(["button", "select", "option", "optgroup", "textarea", "input", "script", "style",
      "template", "noscript", "svg", "canvas", "iframe", "object", "datalist"]);
    const NAME_ATTRS = ["data-field", "data-testid", "data-test", "data-qa"];
    const DULL_ALT = /^(image|img|photo|picture|icon|logo|thumbnail|thumb|placeholder)$|\.(png|jpe?g|gif|webp|svg|avif)$/i;
    const NEXT_WORD = /^(next|next page|next [›»→>]|[›»→>]|>>|▶|older|older posts|more results|weiter|suivant|siguiente|volgende|próxima|successivo)$/i;
    const MAX_FIELDS = 50;
    const MAX_LINKS = 3;
    const BUDGET_MS = 200; // one read's time in the page before it hands back (the page must stay responsive)
    const VIS = { checkVisibilityCSS: true, visibilityProperty: true };
    const marks = new Map(); // token -> element: the index's element, then the table or list container found there

    // ==== Small helpers ===========================================================================================
    const parentOf = (el) => {
      if (el.parentElement) return el.parentElement;
      const r = el.getRootNode();
      return r && r.host ? r.host : null;
    };
    const roleOf = (el) => (el.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();
    const isTable = (el) => el.localName === "table" || ["table", "grid", "treegrid"].includes(roleOf(el));
    const shown = (el) => (el.checkVisibility ? el.checkVisibility(VIS) : el.getClientRects().length > 0);
    const squash = (s) => String(s || "").replace(/\s+/g, " ").trim();
    const sigOf = (el) => el.localName + (el.classList.length ? "." + el.classList[0] : "");

    // The element's text as shown (innerText: CSS-hidden parts left out), cut at ``max`` UTF-16 units.
    function textOf(el, max) {
      let t = el.innerText;
      if (typeof t !== "string") t = el.textContent || "";
      return t.length > max ? t.slice(0, max) : t;
    }

    function linkOf(el) {
      const list = el.matches("a[href], area[href]") ? [el] : el.querySelectorAll("a[href], area[href]");
      for (const a of list) {
        const h = a.href;
        if (typeof h === "string" && h && !/^\s*javascript:/i.test(h)) return h;
      }
      return null;
    }

    function pathOf(el) {
      const path = [];
      let c = el;
      for (; c && c !== document.documentElement; c = c.parentElement) {
        if (!c.parentElement) return null; // in a shadow root or detached: found again by token or ordinal
        path.push(Array.prototype.indexOf.call(c.parentElement.children, c));
      }
      return c ? path.reverse() : null;
    }

    function byPath(path) {
      let c = document.documentElement;
      for (const i of path) c = c && c.children[i];
      return c || null;
    }

    // ==== Finding the target ======================================================================================
    function tableAt(el) {
      for (let c = el; c; c = parentOf(c)) if (c.nodeType === 1 && isTable(c)) return c;
      return null;
    }

    function tableInside(el) {
      let best = null, most = 0;
      for (const t of el.querySelectorAll(TABLE_SEL)) {
        const n = rowList(t).length;
        if (n > most) { best = t; most = n; }
      }
      return best;
    }

    function bestGroup(container) {
      const groups = new Map();
      for (const c of container.children) {
        if (SKIP.has(c.localName)) continue;
        const s = sigOf(c);
        if (!groups.has(s)) groups.set(s, 0);
        groups.set(s, groups.get(s) + 1);
      }
      let best = null;
      for (const [sig, count] of groups) if (!best || count > best.count) best = { container, sig, count };
      return best;
    }

    // An item worth a row: two lines of text, or text with a link or a picture (not a lone button or word).
    function rich(el) {
      const lines = (textOf(el, 2000).match(/[^\n]*\S[^\n]*/g) || []).length;
      return lines >= 2 || (lines >= 1 && (el.matches("a[href]") || !!el.querySelector("a[href], img[alt]")));
    }

    // The repeated items at ``el``: its own children when they repeat at least as often as anything around it,
    // else the nearest ancestor-or-self that repeats among its siblings and reads like a record.
    function listAt(el) {
      const own = bestGroup(el);
      let first = null, chosen = null;
      for (let cur = el, depth = 0; cur && depth < 12; cur = cur.parentElement, depth++) {
        const p = cur.parentElement;
        if (!p || p === document.documentElement) break;
        const sig = sigOf(cur);
        let count = 0;
        for (const c of p.children) if (sigOf(c) === sig) count++;
        if (count < 2) continue;
        const cand = { container: p, sig, count };
        if (!first) first = cand;
        if (rich(cur)) { chosen = cand; break; }
      }
      chosen = chosen || (first && first.count >= 3 ? first : null); // two plain siblings are no list
      if (!own || own.count < 2 || (chosen && own.count < chosen.count)) return chosen;
      if (chosen && own.count === chosen.count) { // a tie: el holds the items only if its children read like records
        const one = Array.from(el.children).find((c) => sigOf(c) === own.sig);
        if (!rich(one)) return chosen;
      }
      return own;
    }

    function locate(el, kind) {
      if (kind !== "items") {
        const t = tableAt(el);
        if (t) return ["table", t, null];
        const own = bestGroup(el);
        const inside = !own || own.count < 3 || kind === "table" ? tableInside(el) : null;
        if (inside) return ["table", inside, null];
        if (kind === "table") return null;
      }
      const list = listAt(el);
      return list ? ["items", list.container, list.sig] : null;
    }

    function describe(kind, el, isig) {
      const desc = { kind, tag: el.localName, id: el.id || "", path: pathOf(el), n: 0, isig: isig || "", csig: sigOf(el) };
      desc.n = Math.max(0, candidates(desc).indexOf(el));
      return desc;
    }

    function candidates(desc) {
      if (desc.kind === "table") return Array.from(document.querySelectorAll(TABLE_SEL));
      return Array.from(document.getElementsByTagName(desc.tag)).filter((e) => sigOf(e) === desc.csig);
    }

    function fits(desc, el) {
      return !!el && el.isConnected && el.localName === desc.tag &&
        (desc.kind === "table" ? isTable(el) : sigOf(el) === desc.csig);
    }

    function find(desc) {
      if (desc.id) {
        const el = document.getElementById(desc.id);
        if (fits(desc, el)) return el;
      }
      if (desc.path) {
        const el = byPath(desc.path);
        if (fits(desc, el)) return el;
      }
      const el = candidates(desc)[desc.n];
      return fits(desc, el) ? el : null;
    }

    function target(arg) {
      const el = marks.get(arg.k);
      if (el && fits(arg.desc, el)) return el;
      const found = find(arg.desc);
      if (found) remember(arg.k, found);
      return found;
    }

    function remember(k, el) {
      marks.delete(k);
      marks.set(k, el);
      if (marks.size > 100) marks.delete(marks.keys().next().value);
    }

    // ==== Tables ==================================================================================================
    // A table's rows in display order: a <table>'s own rows (thead first, tfoot last; not those of nested
    // tables), or an ARIA table's role=row elements whose nearest table is this one. ``rowInfo`` gives one row's
    // row group (an id stable across reads), whether it is in a <thead>, and its cells.
    function rowList(t) {
      if (t.localName === "table") return t.rows;
      return Array.from(t.querySelectorAll("[role=row]")).filter((r) => {
        let owner = parentOf(r);
        while (owner && !isTable(owner)) owner = parentOf(owner);
        return owner === t;
      });
    }

    function rowInfo(t, r) {
      if (t.localName === "table") {
        const g = r.parentElement;
        const sec = g === t ? -1 : Array.prototype.indexOf.call(t.children, g);
        return { el: r, sec, thead: g.localName === "thead", cells: Array.from(r.cells), aria: false };
      }
      const cells = Array.from(r.querySelectorAll(CELL_SEL)).filter((c) => c.closest("[role=row]") === r);
      return { el: r, sec: 0, thead: false, cells, aria: true };
    }

    const isHeadCell = (c) => c.localName === "th" || roleOf(c) === "columnheader";

    // Header rows: those in a <thead>; in a table without one, the leading rows (of the first row group) made
    // only of header cells. Answers a function of the row's position and its info.
    function headerTest(t, list) {
      if (t.localName === "table" && t.tHead) {
        const test = (i, info) => info.thead;
        test.count = 0;
        for (const r of list) if (r.parentElement.localName === "thead") test.count++;
        return test;
      }
      let lead = 0;
      const first = list.length ? rowInfo(t, list[0]) : null;
      for (let i = 0; i < list.length; i++) {
        const info = i ? rowInfo(t, list[i]) : first;
        if (info.sec !== first.sec || !info.cells.length || !info.cells.every(isHeadCell)) break;
        lead = i + 1;
      }
      const test = (i) => i < lead;
      test.count = lead;
      return test;
    }

    function span(c, aria, name) {
      if (!aria) return name === "col" ? c.colSpan : c.rowSpan;
      const n = parseInt(c.getAttribute(name === "col" ? "aria-colspan" : "aria-rowspan"), 10);
      if (name === "row" && n === 0) return 0;
      return n >= 1 ? Math.min(n, name === "col" ? 1000 : 65534) : 1;
    }

    function labelOf(t) {
      if (t.localName === "table" && t.caption) return squash(textOf(t.caption, 300));
      const l = t.getAttribute("aria-label");
      if (l) return squash(l).slice(0, 300);
      const by = t.getAttribute("aria-labelledby");
      const ref = by ? document.getElementById(by.trim().split(/\s+/)[0]) : null;
      return ref ? squash(textOf(ref, 300)) : "";
    }

    // Rows from position ``arg.start`` for about ``BUDGET_MS`` (so the page stays responsive between reads of a
    // big table; ``next`` is where the next read goes on, null at the end), until ``arg.maxRows`` data rows have
    // been read in all (``arg.data`` already were). Hidden rows are sent (their spans place the cells below
    // them) without their text.
    function readTable(t, arg) {
      const list = rowList(t);
      const head = headerTest(t, list);
      const tableShown = shown(t); // a table that is not rendered at all is read whole
      const started = performance.now();
      const out = [];
      let data = arg.data || 0, capped = false, i = arg.start || 0;
      for (; i < list.length; i++) {
        if (out.length && performance.now() - started > BUDGET_MS) break;
        const r = rowInfo(t, list[i]);
        const isHead = head(i, r);
        const hidden = tableShown && !shown(r.el);
        if (!isHead && !hidden && data >= arg.maxRows) { capped = true; break; }
        if (!isHead && !hidden) data++;
        const cells = r.cells.map((c) => {
          const text = hidden ? "" : textOf(c, arg.maxRaw);
          const cs = span(c, r.aria, "col"), rs = span(c, r.aria, "row");
          const href = isHead || hidden ? null : linkOf(c);
          return cs === 1 && rs === 1 && !href ? [text] : [text, cs, rs, href];
        });
        out.push([r.sec, isHead ? 1 : 0, hidden ? 1 : 0, cells]);
      }
      const next = !capped && i < list.length ? i : null;
      return { rows: out, next, total: list.length - head.count, capped, label: labelOf(t) };
    }

    // ==== Repeated items ==========================================================================================
    // The containers holding the items: the container and, when it is one of several alike siblings that hold
    // the same items (a grid laid out in rows), all of them.
    function containersOf(container, isig) {
      const p = container.parentElement;
      if (!p) return [container];
      const csig = sigOf(container);
      const alike = Array.from(p.children).filter((c) => sigOf(c) === csig && Array.from(c.children).some((x) => sigOf(x) === isig));
      return alike.length >= 2 && alike.includes(container) ? alike : [container];
    }

    function itemsOf(container, isig) {
      const out = [];
      for (const c of containersOf(container, isig)) for (const x of c.children) if (sigOf(x) === isig && shown(x)) out.push(x);
      return out;
    }

    const named = (el) => el.hasAttribute("itemprop") || NAME_ATTRS.some((a) => el.hasAttribute(a)) ||
      el.classList.length > 0 || /^h[1-6]$/.test(el.localName);

    function keyOf(el, item) {
      if (el === item) return "text";
      const ip = (el.getAttribute("itemprop") || "").trim();
      if (ip) return ip.split(/\s+/)[0];
      for (const a of NAME_ATTRS) {
        const v = (el.getAttribute(a) || "").trim();
        if (v) return v.slice(0, 60);
      }
      if (el.classList.length) {
        const c = el.classList[0].split("__").pop().split("--")[0]; // BEM: card__price--sale -> price
        if (c) return c.slice(0, 60);
      }
      return /^h[1-6]$/.test(el.localName) ? "heading" : el.localName;
    }

    // One item's fields in document order: each text is owned by its nearest named element (class, itemprop,
    // data-field, heading) inside the item; a label-only element (stars with an aria-label) gives its label;
    // pictures give a meaningful alt; links come last. Keys repeated within an item are numbered.
    function readItem(item, maxRaw) {
      const entries = []; // {el, key, value?, nodes?}
      const owned = new Map();
      const links = [];
      const own = item.matches("a[href]") ? linkOf(item) : null;
      if (own) links.push(own);
      const walk = (node) => {
        for (let c = node.firstChild; c; c = c.nextSibling) {
          if (c.nodeType === 3) {
            if (!/\S/.test(c.data) || !c.parentElement || !shown(c.parentElement)) continue;
            let owner = c.parentElement;
            for (let cur = owner; cur && cur !== item; cur = cur.parentElement) if (named(cur)) { owner = cur; break; }
            let e = owned.get(owner);
            if (!e) { e = { el: owner, key: keyOf(owner, item), nodes: [] }; owned.set(owner, e); entries.push(e); }
            e.nodes.push(c);
          } else if (c.nodeType === 1) {
            if (SKIP.has(c.localName) || roleOf(c) === "button") continue;
            if (c.localName === "a") {
              const h = linkOf(c);
              if (h && !links.includes(h)) links.push(h);
            }
            if (c.localName === "img") {
              const alt = squash(c.getAttribute("alt"));
              if (alt && !DULL_ALT.test(alt) && shown(c)) entries.push({ el: c, key: "image", value: alt });
              continue;
            }
            const label = c.localName === "a" ? "" : squash(c.getAttribute("aria-label") || c.getAttribute("title"));
            if (label && !/[\p{L}\p{Nd}]/u.test(c.textContent || "") && shown(c)) { // stars, icons
              entries.push({ el: c, key: keyOf(c, item), value: label });
              continue;
            }
            walk(c);
          }
        }
      };
      walk(item);
      const fields = [];
      const seen = new Map();
      const add = (key, value) => {
        const n = (seen.get(key) || 0) + 1;
        seen.set(key, n);
        if (fields.length < MAX_FIELDS) fields.push([n === 1 ? key : key + " " + n, value]);
      };
      const owners = entries.filter((e) => e.nodes).map((e) => e.el);
      for (const e of entries) {
        if (!e.nodes) { add(e.key, e.value.slice(0, maxRaw)); continue; }
        const nested = owners.some((o) => o !== e.el && e.el.contains(o));
        add(e.key, nested ? e.nodes.map((n) => n.data).join(" ").slice(0, maxRaw) : textOf(e.el, maxRaw));
      }
      links.slice(0, MAX_LINKS).forEach((h) => add("link", h));
      return fields;
    }

    // Items from ``arg.start`` for about ``BUDGET_MS`` (see readTable), up to ``arg.maxRows`` in all.
    function readItems(container, isig, arg) {
      const all = itemsOf(container, isig);
      const started = performance.now();
      const stop = Math.min(all.length, arg.maxRows);
      const items = [];
      let i = arg.start || 0;
      for (; i < stop && !(items.length && performance.now() - started > BUDGET_MS); i++) {
        items.push(readItem(all[i], arg.maxRaw));
      }
      const next = i < stop ? i : null;
      return { items, next, total: all.length, capped: next === null && all.length > arg.maxRows, label: `<${isig}>` };
    }

    // ==== Pages: probe, next control, scrolling to the end ========================================================
    function units(kind, el, desc) {
      if (kind === "items") return itemsOf(el, desc.isig);
      const list = rowList(el);
      const head = headerTest(el, list);
      return Array.from(list).filter((r, i) => !head(i, rowInfo(el, r)));
    }

    function probe(el, desc) {
      const u = units(desc.kind, el, desc);
      const t = (x) => (x ? (x.textContent || "").slice(0, 500) : "");
      return { n: u.length, sig: t(u[0]) + "\u0001" + t(u[u.length - 1]) };
    }

    function inPager(el) {
      for (let c = el.parentElement, d = 0; c && d < 4; c = c.parentElement, d++) {
        const cls = typeof c.className === "string" ? c.className : "";
        if (/pag/i.test(`${cls} ${c.id} ${c.getAttribute("aria-label") || ""}`)) return true;
      }
      return false;
    }

    function disabled(el) {
      if (el.disabled === true || el.getAttribute("aria-disabled") === "true") return true;
      for (let c = el, d = 0; c && d < 2; c = c.parentElement, d++) if (c.classList.contains("disabled")) return true;
      return getComputedStyle(el).pointerEvents === "none";
    }

    function stepsApart(a, b) {
      let n = 0;
      for (let c = a; c; c = c.parentElement, n++) if (c.contains(b)) return n;
      return 99;
    }

    // The control that shows the next page of ``el``: rel=next, or text/aria-label/title saying next; ranked by
    // sitting in a pagination element, following the target, and being near it.
    function nextOf(el, desc) {
      let best = null;
      const sel = "a[href], button, [role=button], [role=link], input[type=button], input[type=submit]";
      const data = new Set(units(desc.kind, el, desc));
      for (const c of document.querySelectorAll(sel)) {
        if (el.contains(c) && inData(c, el, data)) continue; // a link in the data, not a pager
        const text = squash(c.localName === "input" ? c.value : textOf(c, 100));
        const label = squash(c.getAttribute("aria-label") || c.getAttribute("title"));
        const rel = (c.getAttribute("rel") || "").toLowerCase().split(/\s+/).includes("next");
        const says = NEXT_WORD.test(text) || NEXT_WORD.test(label) || /^next\b|\bnext page\b/i.test(label);
        if (!(rel || says) || !c.getClientRects().length) continue;
        let score = (rel ? 4 : 0) + (/^next( page)?$/i.test(text || label) ? 2 : 0) + (inPager(c) ? 3 : 0);
        if (/^(»|>>)$/.test(text)) score -= 1; // often "last page"
        if (el.compareDocumentPosition(c) & (Node.DOCUMENT_POSITION_FOLLOWING | Node.DOCUMENT_POSITION_CONTAINED_BY)) score += 1;
        score -= stepsApart(el, c) / 10;
        if (!best || score > best.score) best = { el: c, score, text: text || label };
      }
      return best;
    }

    function inData(c, el, data) {
      for (let x = c; x && x !== el; x = x.parentElement) if (data.has(x)) return true;
      return false;
    }

    function scrollerOf(el) {
      for (let c = el; c && c !== document.body && c !== document.documentElement; c = parentOf(c)) {
        const oy = getComputedStyle(c).overflowY;
        if ((oy === "auto" || oy === "scroll" || oy === "overlay") && c.scrollHeight - c.clientHeight > 4) return c;
      }
      return null;
    }

    function toEnd(el, desc) {
      const u = units(desc.kind, el, desc);
      if (u.length) u[u.length - 1].scrollIntoView({ block: "end", behavior: "instant" });
      const sc = scrollerOf(el);
      if (sc) sc.scrollTop = sc.scrollHeight;
      else window.scrollTo({ top: (document.scrollingElement || document.documentElement).scrollHeight, behavior: "instant" });
      return { n: u.length };
    }

    return {
      call(arg, root) {
        if (arg.op === "extract:mark") {
          if (root && root.nodeType === 1) remember(arg.k, root);
          return null;
        }
        if (arg.op === "extract:read" && !arg.desc) {
          const el = marks.get(arg.k);
          if (!el || !el.isConnected) return { error: "gone" };
          const found = locate(el, arg.kind);
          if (!found) return { error: "none" };
          const [kind, t, isig] = found;
          remember(arg.k, t);
          return read(kind, t, describe(kind, t, isig), arg);
        }
        const t = target(arg);
        if (!t) return arg.op === "extract:next" ? null : { error: "gone" };
        switch (arg.op) {
          case "extract:read": return read(arg.desc.kind, t, arg.desc, arg);
          case "extract:probe": return probe(t, arg.desc);
          case "extract:nextInfo": {
            const n = nextOf(t, arg.desc);
            return n ? { found: true, disabled: disabled(n.el), text: n.text } : { found: false, disabled: false, text: "" };
          }
          case "extract:next": { const n = nextOf(t, arg.desc); return n && !disabled(n.el) ? n.el : null; }
          case "extract:end": return toEnd(t, arg.desc);
          default: throw new Error("unknown extract op " + JSON.stringify(arg.op));
        }
      },
    };

    function read(kind, t, desc, arg) {
      const body = kind === "table" ? readTable(t, arg) : readItems(t, desc.isig, arg);
      return { kind, desc, ...body };
    }
  }
})
