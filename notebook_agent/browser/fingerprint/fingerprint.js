// notebook_agent fingerprints: what an element is, read so that it can be found again on a changed page.
//
// A Playwright selector engine registered with ``contentScript: true`` (fingerprint.py), so it runs in
// Playwright's isolated world of every frame like the page script (snapshot.js): the page shares the DOM with
// it but none of its JavaScript, so a page that hooks ``getAttribute``, ``innerText`` or ``JSON`` cannot change
// what a fingerprint says. Same conventions as snapshot.js: a call is ``<engine>=<base64 JSON>``; element ops
// answer with the element or nothing, every other op with a detached element whose text is the JSON result.
//
// Ops:  fp:mark {k}          (element op, scoped) remember the scope element under token k
//       fp:is {k}            (element op, scoped) the scope element when it is the one remembered under k
//       fp:describe {k, positions, here} -> the element's parts (see describe()) or null when k is gone; with
//                               positions, also role_position: fp:rolepos of its own role and name; with
//                               here, of the scope element, remembered under k first (no fp:mark round trip)
//       fp:frameinfo {k}     -> {name, id, src, title, selectors: [css...]} of the <iframe> remembered under k
//       fp:candidates {n, fp} -> {items: [[index, parts]...], capped}: elements of fp's role or tag that share
//                               an identity signal with it (name, test id, id, name attr, href, label,
//                               placeholder, text), or all of them when fp has none but an id or name attr
//       fp:rolepos {k, role, name} -> {n, i}: shown elements of that role and exact name, and the index of
//                               the one remembered under k among them (null when it is not one)
//       fp:get {n, i}        (element op) candidate i of candidates call n
// ``parts`` (describe()): {role, name, label, tag, type, id, id_readable, name_attr, test_id, test_id_attr,
// placeholder, href, text, landmark: {kind, label, heading}, neighbours: {before, after}, path, visible}.
(() => {
  const ELEMENT_OPS = new Set(["fp:mark", "fp:is", "fp:get"]);
  let api = null;
  return {
    queryAll(root, body) {
      if (!api) api = makeApi();
      const arg = JSON.parse(atob(body));
      const res = api.call(arg, root);
      if (ELEMENT_OPS.has(arg.op)) return res && typeof res === "object" && res.nodeType === 1 ? [res] : [];
      const out = document.createElement("div");
      out.textContent = JSON.stringify(res === undefined ? null : res);
      return [out];
    },
  };

  function makeApi() {
    const NAME_MAX = 300;
    const TEXT_MAX = 120;
    const SHORT = 60;
    const MAX_CANDIDATES = 200;
    const TEST_ID_ATTRS = ["data-testid", "data-test-id", "data-test", "data-qa"];
    const HEADINGS = "h1,h2,h3,h4,h5,h6,[role=heading]";
    // Roles whose accessible name comes from their content (as in Playwright's and the accname rules).
    const NAME_FROM_CONTENT = new Set(["button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link",
      "menuitem", "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowheader", "switch", "tab",
      "tooltip", "treeitem"]);
    // (no inherited keys: a page's role attribute or tag name is looked up in them, "constructor" included)
    const table = (entries) => Object.assign(Object.create(null), entries);
    const LANDMARK_TAGS = table({ form: "form", nav: "nav", main: "main", header: "header", footer: "footer",
      aside: "aside", dialog: "dialog", section: "section", search: "search" });
    const LANDMARK_ROLES = table({ form: "form", navigation: "nav", main: "main", banner: "header",
      contentinfo: "footer", complementary: "aside", dialog: "dialog", alertdialog: "dialog", region: "section",
      search: "search" });
    // ARIA roles Playwright knows; any other role attribute is ignored and the implicit role applies.
    const ARIA_ROLES = new Set(("alert alertdialog application article banner blockquote button caption cell checkbox "
      + "code columnheader combobox complementary contentinfo definition deletion dialog directory document emphasis "
      + "feed figure form generic grid gridcell group heading img insertion link list listbox listitem log main mark "
      + "marquee math meter menu menubar menuitem menuitemcheckbox menuitemradio navigation note option paragraph "
      + "progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider "
      + "spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer "
      + "toolbar tooltip tree treegrid treeitem").split(" "));
    const TEXTBOX_TYPES = new Set(["", "text", "email", "tel", "url", "password"]);
    const marks = new Map(); // token -> WeakRef(element), the newest 500
    const rounds = new Map(); // candidates call -> elements, the newest 8

    // ==== Small helpers ===========================================================================================
    const clean = (s, max) => {
      const t = String(s == null ? "" : s).replace(/\s+/g, " ").trim();
      return max && t.length > max ? t.slice(0, max) : t;
    };
    const parentOf = (el) => {
      if (el.parentElement) return el.parentElement;
      const r = el.getRootNode();
      return r && r.host ? r.host : null;
    };
    const rootOf = (el) => el.getRootNode();
    const byId = (el, id) => {
      const r = rootOf(el);
      return r && r.getElementById ? r.getElementById(id) : document.getElementById(id);
    };
    const hidden = (el) => {
      if (el.getAttribute("aria-hidden") === "true") return true;
      try {
        return !el.checkVisibility({ visibilityProperty: true });
      } catch (e) {
        return false;
      }
    };
    const visible = (el) => {
      try {
        if (!el.checkVisibility({ visibilityProperty: true })) return false;
      } catch (e) { /* older engines: fall through to the box */ }
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0;
    };
    const remember = (k, el) => {
      marks.delete(k);
      marks.set(k, new WeakRef(el));
      if (marks.size > 500) marks.delete(marks.keys().next().value);
      return el;
    };
    const marked = (k) => {
      const ref = marks.get(k);
      const el = ref && ref.deref();
      return el && el.isConnected ? el : null;
    };
    // Ids that read as names; generated ones (":r3:", "ember123", UUIDs, hashes, long digit runs) do not
    // survive a rebuild, so they are neither a locator nor strong evidence. The same rule as snapshot.js.
    function readableId(id) {
      if (!id || id.length > 30 || !/[a-z]{2}/i.test(id)) return false;
      if (/\d{3}|^[:«_]|[:»]$|[0-9a-f]{8}-[0-9a-f]{4}/i.test(id)) return false;
      if (/^(ember|ext-|yui|gwt-|mui-|radix-|headlessui-|react-|rc[-_]|ng-|j_id|jsx-|css-|sc-|cdk-|mat-|vue-|uid|auto-?id)/i.test(id)) return false;
      for (const part of id.split(/[-_:.]/)) {
        if (part.length >= 6 && (part.match(/\d/g) || []).length >= 2 && /[a-z]/i.test(part)) return false;
      }
      return true;
    }
    // A URL as a path (and query), without the origin, which changes between a recording and a replay.
    function urlPath(raw) {
      if (!raw) return "";
      let u;
      try {
        u = new URL(raw, document.baseURI);
      } catch (e) { // no base to resolve against (about:blank): a root-relative link is its own path
        return raw.startsWith("/") && !raw.startsWith("//") ? clean(raw.split("#")[0], NAME_MAX) : "";
      }
      if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "file:") return clean(u.pathname + u.search, NAME_MAX);
      return u.protocol;
    }
    const cssString = (s) => '"' + String(s).replace(/[\\"]/g, "\\$&").replace(/[\u0000-\u001f\u007f]/g,
      (c) => "\\" + c.charCodeAt(0).toString(16) + " ") + '"';

    // ==== Role and accessible name ================================================================================
    // Implicit roles from tag and type, as Playwright's get_by_role reads them (the common cases; a role this
    // computes differently from Playwright only costs the role locator, which is checked before it is used).
    // Each tag has one role, or the roles it can have and a function of the element choosing among them: the one
    // table both implicitRole() and rolePosition()'s candidates (IMPLICIT_TAGS) read.
    const landmarkUnlessInside = (role) => (el) => (el.closest("article,aside,main,nav,section") ? "" : role);
    const namedOr = (role) => (el) => (nameOf(el, "generic") ? role : ""); // named how a landmark is: not from content
    const linkIfHref = (el) => (el.hasAttribute("href") ? "link" : "");
    const TAG_ROLES = new Map(Object.entries({
      a: [["link"], linkIfHref], area: [["link"], linkIfHref],
      button: "button", textarea: "textbox", option: "option",
      select: [["listbox", "combobox"], (el) => (el.multiple || el.size > 1 ? "listbox" : "combobox")],
      img: [["img", "presentation"], (el) => (el.getAttribute("alt") === "" && !el.getAttribute("title") ? "presentation" : "img")],
      h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading",
      nav: "navigation", main: "main", aside: "complementary", dialog: "dialog", article: "article",
      ul: "list", ol: "list", menu: "list", li: "listitem", table: "table", tr: "row", td: "cell", th: "columnheader",
      fieldset: "group", optgroup: "group", details: "group", progress: "progressbar", output: "status", hr: "separator",
      form: [["form"], namedOr("form")], section: [["region"], namedOr("region")],
      header: [["banner"], landmarkUnlessInside("banner")], footer: [["contentinfo"], landmarkUnlessInside("contentinfo")],
      input: [["button", "checkbox", "radio", "slider", "spinbutton", "combobox", "searchbox", "textbox"], (el) => {
        const type = (el.getAttribute("type") || "").toLowerCase();
        if (["button", "image", "reset", "submit"].includes(type)) return "button";
        if (type === "checkbox") return "checkbox";
        if (type === "radio") return "radio";
        if (type === "range") return "slider";
        if (type === "number") return "spinbutton";
        if (type === "search") return el.hasAttribute("list") ? "combobox" : "searchbox";
        if (["", "text", "email", "tel", "url"].includes(type)) return el.hasAttribute("list") ? "combobox" : "textbox";
        return "";
      }],
    }));
    function implicitRole(el) {
      const r = TAG_ROLES.get(el.localName);
      return r === undefined ? "" : typeof r === "string" ? r : r[1](el);
    }
    function roleOf(el) {
      const explicit = (el.getAttribute("role") || "").trim().toLowerCase().split(/\s+/)[0];
      if (ARIA_ROLES.has(explicit)) return explicit;
      return implicitRole(el);
    }
    const labelsOf = (el) => {
      try {
        return el.labels ? Array.from(el.labels) : [];
      } catch (e) {
        return [];
      }
    };
    // Text of the elements aria-labelledby names; ``depth`` stops reference loops a hostile page can make.
    const labelledBy = (el, depth = 0) => {
      const by = el.getAttribute("aria-labelledby");
      if (!by || depth > 2) return "";
      return clean(by.trim().split(/\s+/).slice(0, 20).map((id) => {
        const n = byId(el, id);
        return n ? contentText(n, depth + 1) : "";
      }).join(" "), NAME_MAX);
    };
    // A child's text as it joins its parent's: set apart by spaces unless the child is inline.
    function apart(c, t) {
      let display = "inline";
      try { display = getComputedStyle(c).display; } catch (e) { /* keep inline */ }
      return display === "inline" ? t : ` ${t} `;
    }
    // Text from content: text nodes, each child's own name when it has one, alt text, ::before/::after content;
    // hidden children left out; non-inline children set apart by spaces.
    function contentText(el, depth = 0) {
      if (depth > 40) return "";
      const pseudo = (which) => {
        try {
          const c = getComputedStyle(el, which).content;
          return c && c !== "none" && c !== "normal" && /^["']/.test(c) ? c.slice(1, -1) : "";
        } catch (e) {
          return "";
        }
      };
      let out = pseudo("::before");
      const kids = el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes;
      for (const c of kids) {
        if (c.nodeType === 3) { out += c.nodeValue; continue; }
        if (c.nodeType !== 1 || hidden(c)) continue;
        const tag = c.localName;
        if (tag === "script" || tag === "style" || tag === "template" || tag === "noscript") continue;
        let t;
        const own = c.getAttribute("aria-label");
        if (c.hasAttribute("aria-labelledby")) t = labelledBy(c, depth + 1);
        if (!t && own && own.trim()) t = own;
        if (!t && tag === "img") t = c.getAttribute("alt") || "";
        if (!t && (tag === "input" || tag === "select" || tag === "textarea")) t = "";
        else if (!t) t = contentText(c, depth + 1);
        out += apart(c, t);
      }
      return out + pseudo("::after");
    }
    function nameOf(el, role) {
      const by = labelledBy(el);
      if (by) return by;
      const al = clean(el.getAttribute("aria-label"), NAME_MAX);
      if (al) return al;
      const tag = el.localName;
      const type = tag === "input" ? (el.getAttribute("type") || "").toLowerCase() : "";
      if (tag === "input" && ["button", "submit", "reset"].includes(type)) {
        const v = clean(el.getAttribute("value"), NAME_MAX);
        if (v) return v;
        if (type === "submit") return "Submit";
        if (type === "reset") return "Reset";
        return clean(el.getAttribute("title"), NAME_MAX);
      }
      if (tag === "input" && type === "image") {
        return clean(el.getAttribute("alt") || el.getAttribute("value") || el.getAttribute("title") || "Submit", NAME_MAX);
      }
      const labels = labelsOf(el);
      if (labels.length) {
        const t = clean(labels.map((l) => contentText(l)).join(" "), NAME_MAX);
        if (t) return t;
      }
      if (tag === "img" || tag === "area") {
        const alt = clean(el.getAttribute("alt"), NAME_MAX);
        if (alt) return alt;
      }
      if (tag === "fieldset") {
        const legend = Array.from(el.children).find((c) => c.localName === "legend");
        if (legend) { const t = clean(contentText(legend), NAME_MAX); if (t) return t; }
      }
      if (tag === "table") {
        const cap = el.caption;
        if (cap) { const t = clean(contentText(cap), NAME_MAX); if (t) return t; }
      }
      if (NAME_FROM_CONTENT.has(role === undefined ? roleOf(el) : role) && tag !== "input" && tag !== "select") {
        const t = clean(contentText(el), NAME_MAX);
        if (t) return t;
      }
      const title = clean(el.getAttribute("title"), NAME_MAX);
      if (title) return title;
      if (tag === "textarea" || (tag === "input" && (TEXTBOX_TYPES.has(type) || type === "search" || type === "number"))) {
        return clean(el.getAttribute("placeholder"), NAME_MAX);
      }
      return "";
    }

    // ==== Context =================================================================================================
    // The nearest landmark or section around the element, with the nearest heading before it.
    function landmarkOf(el) {
      let kind = "", label = "";
      for (let a = parentOf(el); a && a.nodeType === 1; a = parentOf(a)) {
        const r = (a.getAttribute("role") || "").trim().toLowerCase();
        const k = LANDMARK_ROLES[r] || LANDMARK_TAGS[a.localName];
        if (!k) continue;
        if (k === "section" && !a.hasAttribute("aria-label") && !a.hasAttribute("aria-labelledby") && !r) continue;
        kind = k;
        label = labelledBy(a) || clean(a.getAttribute("aria-label"), SHORT);
        if (!label && a.localName === "form") {
          const id = a.getAttribute("id");
          label = clean(a.getAttribute("name"), SHORT) || (readableId(id) ? id : "") || urlPath(a.getAttribute("action"));
        }
        break;
      }
      return { kind, label: clean(label, SHORT), heading: headingBefore(el) };
    }
    // The text of the nearest heading before the element in document order (its previous siblings' subtrees,
    // then its ancestors'), at most a few hundred steps away.
    function headingBefore(el) {
      let steps = 0;
      for (let node = el; node && node.nodeType === 1 && steps < 400; node = parentOf(node)) {
        if (node !== el && node.matches(HEADINGS)) return clean(contentText(node), SHORT);
        for (let s = node.previousElementSibling; s && steps < 400; s = s.previousElementSibling, steps++) {
          if (hidden(s)) continue;
          if (s.matches(HEADINGS)) return clean(contentText(s), SHORT);
          const inner = s.querySelectorAll(HEADINGS);
          for (let i = inner.length - 1; i >= 0; i--) {
            if (!hidden(inner[i])) return clean(contentText(inner[i]), SHORT);
          }
        }
        if (node.localName === "body") break;
      }
      return "";
    }
    // A sibling's short text: what it shows, or a control's name. A select shows its chosen option, not the list
    // innerText gives: the label "Plan [Pro]" beside a button, not "Plan Free Pro Team", so a recipe that chose
    // another plan still finds the button by its neighbours (the chosen option becomes the row's value there).
    function shortText(n) {
      if (n.nodeType === 3) return clean(n.nodeValue, SHORT);
      if (n.nodeType !== 1 || hidden(n)) return "";
      const own = n.localName === "select" || n.querySelector("select")
        ? shownText(n, 0)
        : n.innerText !== undefined ? n.innerText : n.textContent;
      const t = clean(own, SHORT);
      return t || clean(nameOf(n), SHORT) || clean(n.getAttribute("placeholder"), SHORT);
    }
    // What an element shows, each select as its chosen option (the walk innerText does, for the few elements
    // that hold a select: everything else is read with innerText itself). Only a short text is kept, so the walk
    // stops once it has more than that: a huge block holding one select costs no more than a small one.
    function shownText(n, depth) {
      if (n.nodeType === 3) return n.nodeValue;
      if (n.nodeType !== 1 || depth > 40 || hidden(n)) return "";
      const tag = n.localName;
      if (tag === "select") return Array.from(n.selectedOptions || [], (o) => o.label || o.text).join(", ");
      if (tag === "script" || tag === "style" || tag === "template" || tag === "noscript") return "";
      let out = "";
      for (const c of n.childNodes) {
        if (out.length > 4 * SHORT) break;
        const t = shownText(c, depth + 1);
        out += c.nodeType === 1 ? apart(c, t) : t;
      }
      return out;
    }
    function sibling(el, dir) {
      for (let n = dir < 0 ? el.previousSibling : el.nextSibling; n; n = dir < 0 ? n.previousSibling : n.nextSibling) {
        if (n.nodeType === 8 || (n.nodeType === 1 && ["script", "style", "template"].includes(n.localName))) continue;
        const t = shortText(n);
        if (t) return t;
      }
      return "";
    }
    // Short texts just before and after the element within its parent; a cell's or a definition's first word
    // is the cell or term before it (the label-ish text of a form laid out as a table).
    function neighboursOf(el) {
      let before = sibling(el, -1);
      const after = sibling(el, 1);
      const p = el.parentElement;
      if (!before && p && (p.localName === "td" || p.localName === "th" || p.localName === "dd")) {
        const prev = p.previousElementSibling;
        if (prev) before = shortText(prev);
      }
      return { before, after };
    }

    // ==== Describing an element ===================================================================================
    // A CSS path Playwright's css engine resolves: ``tag:nth-of-type(k)`` steps from the nearest ancestor with a
    // readable id unique in the document (or from ``html``); an open shadow root is crossed with a descendant
    // step, which Playwright's css pierces.
    function cssPath(el) {
      const chunks = [];
      let steps = [];
      for (let n = el; n; ) {
        const root = rootOf(n);
        const id = n.getAttribute("id");
        if (n !== el && root === document && id && readableId(id) && document.querySelectorAll("#" + CSS.escape(id)).length === 1) {
          steps.unshift("#" + CSS.escape(id));
          break;
        }
        const parent = n.parentElement;
        const siblings = parent ? parent.children : root.host ? root.children : null;
        if (!siblings) { steps.unshift(n.localName); break; }
        const same = Array.from(siblings).filter((c) => c.localName === n.localName);
        steps.unshift(same.length > 1 ? `${n.localName}:nth-of-type(${same.indexOf(n) + 1})` : n.localName);
        if (parent) { n = parent; continue; }
        chunks.unshift(steps.join(" > "));
        steps = [];
        n = root.host;
      }
      chunks.unshift(steps.join(" > "));
      return chunks.filter(Boolean).join(" ");
    }
    function testIdOf(el) {
      for (const a of TEST_ID_ATTRS) {
        const v = el.getAttribute(a);
        if (v && v.trim()) return [a, v.slice(0, NAME_MAX)]; // as written: a locator matches it exactly
      }
      return ["", ""];
    }
    function describe(el) {
      const role = roleOf(el);
      const tag = el.localName;
      const [testIdAttr, testId] = testIdOf(el);
      const id = el.getAttribute("id") || "";
      const labels = labelsOf(el);
      const label = clean(labelledBy(el) || labels.map((l) => contentText(l)).join(" "), NAME_MAX);
      const control = tag === "input" || tag === "select" || tag === "textarea";
      let type = "";
      if (tag === "input") type = (el.getAttribute("type") || "text").toLowerCase();
      else if (tag === "button") type = (el.getAttribute("type") || "submit").toLowerCase();
      return {
        role,
        name: nameOf(el, role),
        label,
        tag,
        type,
        id: id.slice(0, NAME_MAX),
        id_readable: readableId(id),
        name_attr: (el.getAttribute("name") || "").slice(0, NAME_MAX),
        test_id: testId,
        test_id_attr: testIdAttr,
        placeholder: (el.getAttribute("placeholder") || "").slice(0, NAME_MAX),
        href: el.hasAttribute("href") ? urlPath(el.getAttribute("href")) : "",
        text: control ? "" : clean(el.innerText !== undefined ? el.innerText : el.textContent, TEXT_MAX),
        landmark: landmarkOf(el),
        neighbours: neighboursOf(el),
        path: cssPath(el),
        visible: visible(el),
      };
    }
    function frameInfo(el) {
      if (!el || (el.localName !== "iframe" && el.localName !== "frame")) return null;
      const tag = el.localName;
      const name = el.getAttribute("name") || "", id = el.getAttribute("id") || "", title = el.getAttribute("title") || "";
      const src = el.getAttribute("src") || "";
      const selectors = [];
      if (name) selectors.push(`${tag}[name=${cssString(name)}]`);
      if (id && readableId(id)) selectors.push("#" + CSS.escape(id));
      if (title) selectors.push(`${tag}[title=${cssString(title)}]`);
      if (src && src.length <= 300) selectors.push(`${tag}[src=${cssString(src)}]`);
      selectors.push(cssPath(el));
      return { name: clean(name, NAME_MAX), id: clean(id, NAME_MAX), src: urlPath(src), title: clean(title, NAME_MAX), selectors };
    }

    // ==== Candidates ==============================================================================================
    // Every element under ``root`` in document order, open shadow roots' content right after their host. A tree
    // walker, not querySelectorAll("*"): iterating that list costs ~5x as much on a large page.
    function elementsOf(root, out, keep) {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let el = walker.nextNode(); el; el = walker.nextNode()) {
        if (!keep || keep(el)) out.push(el);
        if (el.shadowRoot) elementsOf(el.shadowRoot, out, keep);
      }
      return out;
    }
    function allElements() {
      return elementsOf(document, []);
    }
    function hasShadowRoots(root) {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let el = walker.nextNode(); el; el = walker.nextNode()) if (el.shadowRoot) return true;
      return false;
    }
    // The tags implicitRole() can give each role (an element of another tag has the role only through its role
    // attribute): what rolePosition() looks at, so it reads roles and names of a few elements, not every cell.
    const IMPLICIT_TAGS = table({}); // a role read from a run file is looked up here
    for (const [tag, r] of TAG_ROLES) {
      for (const role of typeof r === "string" ? [r] : r[0]) IMPLICIT_TAGS[role] = (IMPLICIT_TAGS[role] ? IMPLICIT_TAGS[role] + "," : "") + tag;
    }
    // Elements that may have ``role``, in document order (shadow roots' content after their host, as
    // allElements() gives them): the browser's own selector query when the page has no shadow roots.
    function mayHaveRole(role) {
      const tags = IMPLICIT_TAGS[role];
      const sel = tags ? tags + ",[role]" : "[role]";
      if (!hasShadowRoots(document)) return Array.from(document.querySelectorAll(sel));
      return elementsOf(document, [], (el) => el.matches(sel));
    }
    // How many shown elements have ``role`` and exactly the accessible name ``name`` (get_by_role(role,
    // name=..., exact=True)), and where ``el`` is among them: one walk here instead of two of Playwright's role
    // engine, which costs ~100 ms on a 3,000-row table and sat before every action (the fingerprint is taken then).
    function rolePosition(el, role, name) {
      if (!el) return null;
      let n = 0;
      let i = null;
      for (const other of mayHaveRole(role)) {
        if (roleOf(other) !== role || hidden(other) || nameOf(other, role) !== name) continue;
        if (other === el) i = n;
        n += 1;
      }
      return { n, i };
    }
    const lower = (s) => clean(s).toLowerCase();
    // Elements worth scoring: the same role or tag, and at least one identity signal in common with ``fp``; when
    // the fingerprint has no name, label, text, placeholder, link or test id (an icon button known by its id),
    // every element of its role or tag, for the context to tell.
    function candidates(n, fp) {
      const items = [];
      const els = [];
      let capped = false;
      const want = { name: lower(fp.name), text: lower(fp.text), label: lower(fp.label) };
      const weak = !(fp.name || fp.text || fp.label || fp.placeholder || fp.href || fp.test_id);
      for (const el of allElements()) {
        const tag = el.localName;
        const role = roleOf(el);
        if (tag !== fp.tag && !(fp.role && role === fp.role)) continue;
        const [, testId] = testIdOf(el);
        let hit = weak || (fp.test_id && testId === fp.test_id) || (fp.id && el.getAttribute("id") === fp.id)
          || (fp.name_attr && el.getAttribute("name") === fp.name_attr)
          || (fp.placeholder && el.getAttribute("placeholder") === fp.placeholder)
          || (fp.href && el.hasAttribute("href") && urlPath(el.getAttribute("href")) === fp.href);
        if (!hit && want.name) hit = lower(nameOf(el, role)) === want.name;
        if (!hit && want.text) hit = lower(el.innerText !== undefined ? el.innerText : el.textContent).slice(0, TEXT_MAX) === want.text;
        if (!hit && want.label) hit = lower(labelledBy(el) || labelsOf(el).map((l) => contentText(l)).join(" ")) === want.label;
        if (!hit) continue;
        if (items.length >= MAX_CANDIDATES) { capped = true; break; }
        items.push([els.length, describe(el)]);
        els.push(el);
      }
      rounds.set(n, els);
      if (rounds.size > 8) rounds.delete(rounds.keys().next().value);
      return { items, capped };
    }

    return {
      call(arg, root) {
        switch (arg && arg.op) {
          case "fp:mark": return root && root.nodeType === 1 ? remember(String(arg.k), root) : null;
          case "fp:is": return root && root === marked(String(arg.k)) ? root : null;
          case "fp:describe": {
            // scoped (``here``): the element the selector chain reached, remembered under k on the way
            // (a detached scope is the page script's stand-in for an element that is gone)
            const here = root && root.nodeType === 1 && root.isConnected;
            const el = arg.here ? (here ? remember(String(arg.k), root) : null) : marked(String(arg.k));
            if (!el) return null;
            const parts = describe(el);
            if (arg.positions && parts.role && parts.name) parts.role_position = rolePosition(el, parts.role, parts.name);
            return parts;
          }
          case "fp:frameinfo": return frameInfo(marked(String(arg.k)));
          case "fp:candidates": return candidates(String(arg.n), arg.fp || {});
          case "fp:rolepos": return rolePosition(marked(String(arg.k)), String(arg.role), String(arg.name));
          case "fp:get": { const els = rounds.get(String(arg.n)); return els ? els[arg.i] || null : null; }
          default: throw new Error("unknown fingerprint op " + JSON.stringify(arg && arg.op));
        }
      },
    };
  }
})()
