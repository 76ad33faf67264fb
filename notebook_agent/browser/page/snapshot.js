// notebook_agent page script: one call per frame builds that frame's part of the browser-state snapshot.
//
// A Playwright selector engine registered with ``contentScript: true``, so Playwright evaluates it in its own
// isolated ("utility") world of every frame, in-process or not: the page shares the DOM with it but none of
// its JavaScript globals or prototypes, so a page that hooks ``getBoundingClientRect``, ``innerText``,
// ``Symbol.for`` or ``JSON.stringify`` changes nothing here, and cannot reach the API or its element registry.
// The API is made on first use in a document and lives as long as that document's isolated world.
//
// A call is a selector ``<engine>=<base64 of the JSON argument>``. Element ops ("get", "frame") answer with
// the element (Playwright hands it to Python as an ElementHandle) or with nothing; every other op answers
// with a detached element, never inserted into the document, whose text is the JSON result, which Python
// reads with ``locator.text_content()`` (also evaluated in the isolated world).
//
// Output of the snapshot op (JSON): {first, url, title, vw, vh, sx, sy, pw, ph, items, els, ms, status?}, or
// {retag: [frame tokens]} when a child frame's <iframe> is not registered in this world (see the "frame" op).
//   items: document-order list of [0, depth, elementIdx] | [1, depth, text, x, y, w, h, inView]
//          | [2, depth, childFrameIdx, contentX, contentY, clipL, clipT, clipR, clipB]
//          | [3, depth, tableIdx, x, y, w, h, inView]: a data table starts here (the "table" op finds it again)
//   els:   {i, tag, text, a:[[name, value|true]...] (display order), box:[x,y,w,h], v:inView, and only when set:
//           role (explicit), name (accessible name), n:isNew, dis:disabled, href, id, s:sensitive}
// Coordinates are CSS pixels relative to this frame's viewport.
(() => {
  // Filled in by Python (page_script.py, TRACKER_EVENTS): the event names of the main-world tracker's answer.
  const EVENTS = __NOTEBOOK_AGENT_EVENTS__;
  const ELEMENT_OPS = new Set(["get", "frame", "table"]);
  let api = null;
  return {
    queryAll(root, body) {
      if (!api) api = makeApi();
      const arg = JSON.parse(atob(body));
      const res = api.call(arg, root);
      if (ELEMENT_OPS.has(arg.op)) return res && typeof res === "object" && res.nodeType === 1 ? [res] : [];
      const out = document.createElement("div");
      out.textContent = arg.op === "snapshot" ? res : JSON.stringify(res === undefined ? null : res);
      return [out];
    },
  };

  function makeApi() {
    // ==== Constants ===============================================================================================
    // Which tags are skipped, walked as leaves, or count as interactive; what marks a field as sensitive;
    // the length limits of attribute values and text.
    const SKIP = new Set([
      "script", "style", "noscript", "template", "head", "meta", "link", "title", "base", "datalist", "param",
      "source", "track", "colgroup", "col",
    ]);
    // Elements whose children are not walked (their state is read from properties instead).
    const LEAF = new Set(["select", "textarea", "input", "svg", "img", "video", "audio", "canvas", "object", "embed",
      "iframe", "frame", "math", "picture"]);
    const ROLES = new Set([
      "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
      "option", "combobox", "listbox", "textbox", "searchbox", "slider", "spinbutton", "treeitem", "scrollbar",
    ]); // not row/gridcell: grids would index every cell; clickable ones are found by handler, listener or cursor
    // Implicit roles: an explicit role equal to these is noise.
    // (no inherited keys: a page's tag name is looked up in it)
    const IMPLICIT = Object.assign(Object.create(null), { a: "link", button: "button", select: "combobox", textarea: "textbox", option: "option" });
    const FORM_TAGS = new Set(["button", "input", "select", "textarea", "option", "optgroup", "fieldset"]);
    const SENSITIVE_AUTOCOMPLETE = /\b(cc-number|cc-csc|cc-exp|cc-exp-month|cc-exp-year|one-time-code|current-password|new-password)\b/i;
    // whole-word short names ("pin", not "spinner"; "pass", not "passenger") or unambiguous long ones
    const SENSITIVE_NAME = /(^|[^a-z])(pass|pwd|pin|otp|ssn|cvv|cvc|csc|key|mfa|totp|2fa)([^a-z]|$)|password|passwd|passcode|card.?num|ccnum|cc-?number|secret|token|api.?key|private.?key|access.?key|one.?time/i;
    // Handler content attributes that make an element clickable (handler properties come from the tracker).
    const HANDLER_ATTRS = ["onclick", "onmousedown", "onmouseup", "onpointerdown", "onmouseenter", "onmouseover"];
    const NO_VALUE_TYPES = new Set(["checkbox", "radio", "submit", "button", "reset", "image", "file"]);
    const ATTR_MAX = 40;
    const VALUE_MAX = 80;
    // A typed value as a field's line shows it: in full up to these, else its start and its end (see fieldValue).
    const FIELD_VALUE_MAX = 160;
    const TEXTAREA_VALUE_MAX = 2000;
    const TEXT_ABSORB_MAX = 150;
    const TEXT_ITEM_MAX = 5000;
    const NAME_MAX = 80;
    // Controls whose accessible name (label, aria-label, aria-labelledby) is printed after their tag.
    const LABELABLE = new Set(["input", "select", "textarea", "meter", "progress", "output"]);
    const NAMED_INPUT_SKIP = new Set(["submit", "button", "reset", "image", "hidden"]); // these show their value
    // ARIA fields: named like form controls (their aria-label/aria-labelledby follows the tag).
    const FIELD_ROLES = new Set(["checkbox", "radio", "switch", "combobox", "listbox", "textbox", "searchbox", "slider",
      "spinbutton", "menuitemcheckbox", "menuitemradio"]);
    const LIGHT_STYLE_MAX = 3000; // off-screen elements whose style a viewport snapshot reads (see walkLight)
    // Tables the state names, so extract_table can read one that holds nothing interactive (see dataTable).
    const TABLE_ROLES = new Set(["table", "grid", "treegrid"]);
    const TABLE_SEL = "table, [role=table], [role=grid], [role=treegrid]";

    // seen: elements of earlier snapshots (for "*" new marks); els: the latest snapshot's elements by index;
    // frames: child frame token -> its <iframe> (see registerFrame)
    const state = { seen: new WeakSet(), els: [], tables: [], snapshots: 0, id: undefined, frames: new Map(), overlay: null, mask: null };
    const range = document.createRange();

    // ==== Geometry and visibility =================================================================================
    // Text cleaning, box intersection, "is this box visible", sensitive-field detection, scroll info.
    function clean(s, max) {
      if (s == null) return "";
      s = String(s).replace(/\s+/g, " ").trim();
      if (max && s.length > max) s = s.slice(0, max - 1) + "…";
      return s;
    }

    // A field's value as its line shows it: in full up to ``max`` characters (a textarea's text is page text
    // too), else its start and its end around " … ". Cut at the end, a model could not check the last words it
    // typed, nor read the end of a long text it was asked about.
    function fieldValue(v, max) {
      const s = clean(v);
      if (s.length <= max) return s;
      const tail = Math.floor(max / 3);
      return s.slice(0, max - tail - 3).trimEnd() + " … " + s.slice(s.length - tail).trimStart();
    }

    function intersects(r, c) {
      return r.right > c.l && r.left < c.r && r.bottom > c.t && r.top < c.b;
    }

    function boxVisible(el) {
      const r = el.getBoundingClientRect();
      if (r.width <= 1 || r.height <= 1) return false;
      const cs = getComputedStyle(el);
      return cs.visibility === "visible" && cs.opacity !== "0" && cs.display !== "none";
    }

    function isSensitive(el) {
      if (el.type === "password") return true;
      const ac = el.getAttribute("autocomplete");
      if (ac && SENSITIVE_AUTOCOMPLETE.test(ac)) return true;
      const id = (el.getAttribute("name") || "") + " " + (el.id || "");
      if (id.trim() && SENSITIVE_NAME.test(id)) return true;
      try {
        const sec = getComputedStyle(el).webkitTextSecurity;
        if (sec && sec !== "none") return true;
      } catch (e) { /* not supported */ }
      return false;
    }

    function scrollInfo(el, cs) {
      const oy = cs.overflowY, ox = cs.overflowX;
      const sy = (oy === "auto" || oy === "scroll" || oy === "overlay") && el.scrollHeight - el.clientHeight > 4;
      const sx = (ox === "auto" || ox === "scroll" || ox === "overlay") && el.scrollWidth - el.clientWidth > 4;
      if (!sy && !sx) return null;
      const out = [];
      if (sy) {
        const up = Math.round(el.scrollTop), down = Math.round(el.scrollHeight - el.clientHeight - el.scrollTop);
        if (up > 0) out.push("up:" + up);
        if (down > 0) out.push("down:" + down);
      }
      if (sx) {
        const left = Math.round(el.scrollLeft), right = Math.round(el.scrollWidth - el.clientWidth - el.scrollLeft);
        if (left > 0) out.push("left:" + left);
        if (right > 0) out.push("right:" + right);
      }
      return out.join(",") || "yes";
    }

    function bigContainer(el) {
      return el.getElementsByTagName("*").length > 100;
    }

    // ==== Interactivity ===========================================================================================
    // Why an element gets an index (tag, role, contenteditable, handler, tracked listener, pointer cursor,
    // scrollable), and whether something else covers it in the viewport.
    function interactiveReason(el, tag, cs, pcursor, cursor, tracked) {
      switch (tag) {
        case "a":
          if (el.hasAttribute("href")) return "link";
          break;
        case "button": case "select": case "textarea": case "summary":
          return tag;
        case "input":
          return el.type === "hidden" ? "" : "input";
        case "label": {
          const c = el.control;
          if (c && !boxVisible(c)) return "label";
          break;
        }
        case "html": case "body":
          return "";
      }
      const role = el.getAttribute("role");
      if (role && ROLES.has(role.trim().split(/\s+/)[0])) return "role";
      if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return "editable";
      // handler properties set by page script are per world (null here): the tracker reports those
      if (tracked.handlers.has(el) || el.hasAttributes() && HANDLER_ATTRS.some((a) => el.hasAttribute(a))) return "handler";
      if (tracked.listeners.has(el) && !bigContainer(el)) return "listener";
      const ti = el.getAttribute("tabindex");
      if (ti !== null && Number(ti) >= 0) return "tabindex";
      if (cursor === "pointer" && pcursor !== "pointer") return "pointer";
      return "";
    }

    // What the main-world tracker (page_script.py, TRACKER) knows and this world cannot see: elements that got
    // click-like listeners, and elements whose on* handler properties page script set. Asked synchronously:
    // one event on the window, answered by one event per such element, caught here on the way down.
    // A page can forge or swallow these events, and so make elements look more or less clickable, which it
    // could do anyway by adding or leaving out handlers; it cannot change what an element says or which
    // element an index points to, since those come from this world.
    function pullTracked() {
      const listeners = new Set(), handlers = new Set();
      const take = (set) => (e) => {
        const t = e.composedPath()[0];
        if (t && t.nodeType === 1) set.add(t);
      };
      const onListener = take(listeners), onHandler = take(handlers);
      window.addEventListener(EVENTS.listener, onListener, true);
      window.addEventListener(EVENTS.handler, onHandler, true);
      try {
        window.dispatchEvent(new CustomEvent(EVENTS.pull));
      } finally {
        window.removeEventListener(EVENTS.listener, onListener, true);
        window.removeEventListener(EVENTS.handler, onHandler, true);
      }
      return { listeners, handlers };
    }

    function isCovered(el, r, clip) {
      const root = el.getRootNode();
      const doc = root && root.elementFromPoint ? root : document;
      const l = Math.max(r.left, clip.l), t = Math.max(r.top, clip.t);
      const rr = Math.min(r.right, clip.r), b = Math.min(r.bottom, clip.b);
      if (rr - l < 1 || b - t < 1) return false;
      const ix = Math.min(2, (rr - l) / 4), iy = Math.min(2, (b - t) / 4);
      const pts = [[(l + rr) / 2, (t + b) / 2], [l + ix, t + iy], [rr - ix, t + iy], [l + ix, b - iy], [rr - ix, b - iy]];
      for (const [x, y] of pts) {
        const h = doc.elementFromPoint(x, y);
        if (!h || h === el || el.contains(h) || h.contains(el)) return false;
        if (h.localName === "label" && h.control === el) return false;
      }
      return true;
    }

    // ==== Names ===================================================================================================
    // A form control's accessible name, as the model reads it after the tag: ``<input type=checkbox />I agree``.
    // Order as in accname: aria-labelledby, aria-label, then the <label>s (wrapping or for=). ``from`` says
    // where it came from: only label text is then left out of the page text (aria-labelledby targets are often
    // headings that also matter on their own).
    function controlName(el) {
      const tag = el.localName;
      if (tag === "input" && NAMED_INPUT_SKIP.has(el.type)) return null;
      if (!LABELABLE.has(tag) && !FIELD_ROLES.has((el.getAttribute("role") || "").trim().split(/\s+/)[0])) return null;
      const by = el.getAttribute("aria-labelledby");
      if (by) {
        const root = el.getRootNode();
        const t = clean(by.trim().split(/\s+/).map((id) => {
          const n = root.getElementById ? root.getElementById(id) : document.getElementById(id);
          return n ? n.textContent : "";
        }).join(" "), NAME_MAX);
        if (t) return { name: t, from: "labelledby" };
      }
      const al = clean(el.getAttribute("aria-label"), NAME_MAX);
      if (al) return { name: al, from: "aria-label" };
      const labels = el.labels;
      if (labels && labels.length) {
        const t = clean(Array.from(labels, labelText).join(" "), NAME_MAX);
        if (t) return { name: t, from: "label" };
      }
      return null;
    }

    // An element known by its picture alone (an icon: no text, no label, no title, no readable id) is named by
    // what the page calls the picture, shown as ``icon=``: an SVG's <title> or the symbol it uses, an image's
    // file name, its class words ("trash", "fa-star"), the file name of its CSS image (content, background or
    // ::before). Without it a row of icons reads as bare ``<span />``s, and delete cannot be told from star.
    const ICON_NOISE = new Set(["icon", "icons", "ico", "fa", "fas", "far", "fal", "fad", "fab", "solid", "regular",
      "glyphicon", "bi", "mdi", "material", "symbols", "outlined", "rounded", "sharp", "svg", "img", "image", "btn",
      "button", "link", "clicked", "active", "selected", "hover", "focus", "focused", "disabled", "enabled", "open",
      "closed", "show", "hidden", "visible", "pull", "float", "inline", "block", "flex", "small", "large", "primary",
      "secondary", "default", "light", "dark", "white", "black", "gray", "grey", "png", "gif", "jpg", "jpeg", "webp",
      "item", "wrapper", "container", "inner", "outer", "static", "assets", "images", "sprite", "sprites", "css", "jsx",
      "styled", "emotion"]);
    const ICON_NAMED_BY = new Set(["aria-label", "title", "alt", "placeholder", "value", "id", "name", "download"]);
    const ICON_CHILDREN = "svg, img, i, span, use";

    // The words of a class name or file name that can name a picture ("fa-trash-o" -> "trash", "left-arrow.png"
    // -> "left arrow"); hashes, digits and framework words are dropped.
    function iconWords(s) {
      const out = [];
      for (const part of String(s || "").replace(/([a-z])([A-Z])/g, "$1 $2").split(/[^A-Za-z0-9]+/)) {
        const w = part.toLowerCase();
        if (w.length < 3 || !/^[a-z]+$/.test(w) || ICON_NOISE.has(w) || out.includes(w)) continue;
        out.push(w);
      }
      return out.slice(0, 3).join(" ");
    }

    function fileWords(url) {
      if (!url || /^data:/i.test(url)) return "";
      const file = url.split(/[?#]/)[0].split("/").pop() || "";
      return iconWords(file.replace(/\.[a-z0-9]+$/i, ""));
    }

    function cssImageWords(el, pseudo) {
      let cs;
      try { cs = getComputedStyle(el, pseudo); } catch (e) { return ""; }
      for (const v of [cs.content, cs.backgroundImage]) {
        const m = /url\(["']?([^"')]+)["']?\)/.exec(v || "");
        const w = m ? fileWords(m[1]) : "";
        if (w) return w;
      }
      return "";
    }

    function iconName(el) {
      const parts = [el, ...Array.from(el.querySelectorAll(ICON_CHILDREN)).slice(0, 4)];
      for (const n of parts) {
        if (n.localName === "svg") {
          const t = n.querySelector("title");
          const w = t ? clean(t.textContent, NAME_MAX) : clean(n.getAttribute("aria-label"), NAME_MAX);
          if (w) return w;
        }
        if (n.localName === "use") {
          const w = iconWords((n.getAttribute("href") || n.getAttribute("xlink:href") || "").split("#").pop());
          if (w) return w;
        }
        if (n.localName === "img") {
          const w = clean(n.getAttribute("alt") || n.getAttribute("title"), NAME_MAX) || fileWords(n.getAttribute("src"));
          if (w) return w;
        }
      }
      for (const n of parts) {
        const w = n.localName === "use" ? "" : iconWords(n.getAttribute("class"));
        if (w) return w;
      }
      for (const n of parts) {
        if (n.localName === "use") continue;
        const w = cssImageWords(n, null) || cssImageWords(n, "::before");
        if (w) return w;
      }
      return "";
    }

    // A control as the approval policy reads it (text, value, names), for the <label> that activates it.
    function controlWords(c) {
      const parts = [c.localName === "input" ? c.type : c.localName, c.value, c.textContent,
        c.getAttribute("aria-label"), c.getAttribute("title"), c.getAttribute("name"), c.id];
      return clean(parts.filter((p) => p).join(" "), 200);
    }

    // A label's own text, without what its controls show (a wrapped select's options, a textarea's text).
    function labelText(label) {
      let out = "";
      const walk = (n) => {
        for (let c = n.firstChild; c; c = c.nextSibling) {
          if (c.nodeType === 3) out += c.nodeValue;
          else if (c.nodeType === 1 && !SKIP.has(c.localName) && c.localName !== "select" && c.localName !== "textarea") {
            if (c.localName === "br") out += " ";
            else walk(c);
          }
        }
      };
      walk(label);
      return out;
    }

    // Whether this <label>'s text is printed as its control's name, so the walk leaves it out of the page
    // text: the control is labelable, visible, will be listed in this snapshot, and gets its name from labels.
    function labelIsNamed(label, view, full) {
      const c = label.control;
      if (!c || !boxVisible(c)) return false;
      if (!full && !intersects(c.getBoundingClientRect(), view)) return false;
      const n = controlName(c);
      return !!n && n.from === "label";
    }

    // Ids that read as names ("shipping-address", "email") help the model tell similar controls apart;
    // generated ones (":r3:", "ember123", UUIDs, hashes, long digit runs) are noise and are left out.
    function readableId(id) {
      if (!id || id.length > 30 || !/[a-z]{2}/i.test(id)) return false;
      if (/\d{3}|^[:«_]|[:»]$|[0-9a-f]{8}-[0-9a-f]{4}/i.test(id)) return false;
      if (/^(ember|ext-|yui|gwt-|mui-|radix-|headlessui-|react-|rc[-_]|ng-|j_id|jsx-|css-|sc-|cdk-|mat-|vue-|uid|auto-?id)/i.test(id)) return false;
      for (const part of id.split(/[-_:.]/)) {
        if (part.length >= 6 && (part.match(/\d/g) || []).length >= 2 && /[a-z]/i.test(part)) return false; // "a8f3k2"
      }
      return true;
    }

    // ==== Attributes and live values ==============================================================================
    // The attributes an element line shows, in display order, with live values (typed text, checked, the
    // selected option and the options of a select), sensitive values masked.
    function selectAttrs(el, attrs) {
      const opts = el.options;
      const sel = [];
      const names = [];
      for (let k = 0; k < opts.length; k++) {
        const o = opts[k];
        const label = clean(o.label || o.text, 30);
        if (o.selected) sel.push(label);
        if (names.length < 12) names.push(label);
      }
      if (el.multiple && sel.length) attrs.push(["selected", sel.join("|")]);
      else if (sel.length) attrs.push(["value", sel[0]]);
      let o = names.join("|");
      if (opts.length > names.length) o += "|…(" + (opts.length - names.length) + " more)";
      attrs.push(["options", o]);
    }

    // Build the element's attribute list in display order; values are live properties where they matter.
    function buildAttrs(el, tag, text, rec, cs, scroll, cname) {
      const attrs = [];
      const lowText = (text || (cname ? cname.name : "")).toLowerCase();
      const role = el.getAttribute("role");
      if (role && IMPLICIT[tag] !== role) attrs.push(["role", clean(role, ATTR_MAX)]);
      if (tag === "input") attrs.push(["type", el.type]);
      else if (tag === "button" && el.hasAttribute("type") && el.getAttribute("type") !== "submit") attrs.push(["type", el.type]);
      const name = el.getAttribute("name");
      if (name) attrs.push(["name", clean(name, ATTR_MAX)]);
      const ph = el.getAttribute("placeholder");
      if (ph && ph.toLowerCase() !== lowText) attrs.push(["placeholder", clean(ph, ATTR_MAX)]);
      const al = el.getAttribute("aria-label");
      if (al && clean(al).toLowerCase() !== lowText && !cname) attrs.push(["aria-label", clean(al, ATTR_MAX)]);
      const title = el.getAttribute("title");
      if (title && clean(title).toLowerCase() !== lowText && title !== al) attrs.push(["title", clean(title, ATTR_MAX)]);
      if (tag === "input" && el.type === "image" && el.alt) attrs.push(["alt", clean(el.alt, ATTR_MAX)]);
      // A link that saves a file instead of opening a page: the model and the approval policy both need to know.
      if ((tag === "a" || tag === "area") && el.hasAttribute("download")) {
        const file = el.getAttribute("download");
        attrs.push(["download", file ? clean(file, ATTR_MAX) : true]);
      }
      if (tag === "input" && !NO_VALUE_TYPES.has(el.type) || tag === "textarea") {
        const v = el.value;
        if (v) attrs.push(["value", isSensitive(el) ? "[masked]" : fieldValue(v, tag === "textarea" ? TEXTAREA_VALUE_MAX : FIELD_VALUE_MAX)]);
        else if (isSensitive(el)) rec.sensitive = true;
        if (v && isSensitive(el)) rec.sensitive = true;
      }
      if (tag === "input" && el.type === "file" && el.files && el.files.length) {
        attrs.push(["files", clean(Array.from(el.files).map((f) => f.name).join("|"), VALUE_MAX)]);
      }
      if (tag === "input" && (el.type === "checkbox" || el.type === "radio")) {
        attrs.push(["checked", el.indeterminate ? "mixed" : String(el.checked)]);
      }
      if (tag === "label") {
        const c = el.control;
        if (c && c.localName === "input" && (c.type === "checkbox" || c.type === "radio")) {
          attrs.push(["for", c.type]);
          attrs.push(["checked", String(c.checked)]);
        } else if (c) {
          attrs.push(["for", c.localName + (c.type && c.localName === "input" ? ":" + c.type : "")]);
        }
      }
      if (tag === "select") selectAttrs(el, attrs);
      for (const a of ["aria-checked", "aria-selected", "aria-pressed", "aria-expanded", "aria-haspopup",
        "aria-valuenow", "aria-valuemin", "aria-valuemax", "aria-current"]) {
        const v = el.getAttribute(a);
        if (v !== null && v !== "" && !(a === "aria-haspopup" && v === "false")) attrs.push([a, clean(v, ATTR_MAX)]);
      }
      if (tag === "input" && (el.type === "number" || el.type === "range" || el.type.startsWith("date") ||
        el.type === "time" || el.type === "month" || el.type === "week")) {
        for (const a of ["min", "max", "step"]) {
          const v = el.getAttribute(a);
          if (v) attrs.push([a, clean(v, ATTR_MAX)]);
        }
      }
      if (tag === "input" && el.type === "file" && el.accept) attrs.push(["accept", clean(el.accept, ATTR_MAX)]);
      if ((tag === "input" || tag === "select") && el.multiple) attrs.push(["multiple", true]);
      const target = el.getAttribute("target");
      if (target && target !== "_self" && (tag === "a" || tag === "form" || tag === "area")) attrs.push(["target", clean(target, 20)]);
      if (rec.editable) attrs.push(["contenteditable", true]);
      if (el.readOnly && (tag === "input" || tag === "textarea")) attrs.push(["readonly", true]);
      if (el.required) attrs.push(["required", true]);
      if (rec.dis) attrs.push(["disabled", true]);
      if (scroll) attrs.push(["scrollable", scroll]);
      const id = el.id;
      if (id && readableId(id) && id.toLowerCase() !== (name || "").toLowerCase() && id.toLowerCase() !== lowText) {
        attrs.push(["id", id]);
      }
      return attrs;
    }

    // ==== The snapshot walk =======================================================================================
    // One pass over the DOM in document order (open shadow roots included): candidates become indexed
    // elements, text nodes are merged into lines measured once at flush, child frames become placeholders
    // the Python side fills in. Viewport mode walks off-screen subtrees "light" (no measuring, no text).
    // The result is one JSON string (see the header for its shape).
    function snapshot(arg) {
      const t0 = performance.now();
      const full = !!arg.full;
      // child frames by token; one never registered in this world is asked for again (a removed iframe's
      // token just finds nothing to place, and is forgotten)
      const tokens = arg.frames || [];
      const retag = tokens.filter((k) => !state.frames.has(k));
      if (retag.length && !arg.retagged) return JSON.stringify({ retag });
      const frameEls = tokens.map((k) => state.frames.get(k) || null);
      for (const [k, el] of state.frames) if (!el.isConnected) state.frames.delete(k);
      const tracked = pullTracked();
      const first = state.snapshots === 0;
      state.snapshots++;
      const de = document.documentElement;
      const vw = (de && de.clientWidth) || window.innerWidth;
      const vh = (de && de.clientHeight) || window.innerHeight;
      const view = { l: 0, t: 0, r: vw, b: vh };
      const items = [];
      const els = [];
      const nodes = [];
      const tables = []; // the data tables named in this snapshot, in document order
      const seen = state.seen;
      const fresh = new Set(); // elements first seen in this pass (not on a document's first snapshot)
      const formIds = new Map();
      // Pending text line. Text nodes are only collected here; the line's box is measured once, at flush,
      // from its first and last text node (a per-node measurement dominated the cost on big pages).
      let buf = null; // {s, d, owner, n0, n1, clip, sep}
      let lightLeft = LIGHT_STYLE_MAX;

      function nodeRect(n) {
        range.selectNodeContents(n);
        return range.getBoundingClientRect();
      }

      function flush() {
        if (!buf) return;
        const b = buf;
        buf = null;
        const s = b.s.trim();
        if (!s) return;
        let r = nodeRect(b.n0);
        let l = r.left, t = r.top, rt = r.right, bt = r.bottom;
        // full page: the first node places the line well enough; viewport mode: the last node too, so a
        // paragraph that starts above the viewport and ends inside it is kept
        if (b.n1 !== b.n0 && (!full || (rt - l === 0 && bt - t === 0) || !intersects(r, b.clip))) {
          r = nodeRect(b.n1);
          if (r.width || r.height) {
            if (rt - l === 0 && bt - t === 0) { l = r.left; t = r.top; rt = r.right; bt = r.bottom; }
            else { l = Math.min(l, r.left); t = Math.min(t, r.top); rt = Math.max(rt, r.right); bt = Math.max(bt, r.bottom); }
          }
        }
        if (rt - l === 0 && bt - t === 0) return; // not rendered (closed <details>, empty layout)
        const c = b.clip;
        const inView = rt > c.l && l < c.r && bt > c.t && t < c.b;
        if (!full && !inView) return;
        const item = [1, b.d, s.length > TEXT_ITEM_MAX ? s.slice(0, TEXT_ITEM_MAX - 1) + "…" : s,
          Math.round(l), Math.round(t), Math.round(rt - l), Math.round(bt - t), inView ? 1 : 0];
        if (b.owner) b.owner.texts.push(items.length);
        items.push(item);
      }

      // A soft boundary (inline-block, table cell) separates words without starting a new line.
      function soft(sep) {
        if (buf && buf.s.trim() && (!buf.sep || sep.length > buf.sep.length)) buf.sep = sep;
      }

      function addText(s, ctx, node) {
        if (buf && (buf.owner !== ctx.owner || buf.d !== ctx.depth || buf.clip !== ctx.clip)) flush();
        if (!buf) buf = { s: "", d: ctx.depth, owner: ctx.owner, n0: node, n1: node, clip: ctx.clip, sep: "" };
        else buf.n1 = node;
        if (buf.sep) {
          if (buf.sep === " ") {
            if (!/\s$/.test(buf.s) && !/^\s/.test(s)) buf.s += " ";
          } else {
            buf.s = buf.s.trimEnd() + buf.sep;
            s = s.trimStart();
          }
          buf.sep = "";
        }
        buf.s += s;
      }

      function onText(node, ctx) {
        if (!ctx.vis || ctx.light || ctx.mute) return;
        const raw = node.nodeValue;
        if (!raw) return;
        const s = raw.replace(/\s+/g, " ");
        if (s === " ") {
          if (buf && !buf.s.endsWith(" ")) buf.s += " ";
          return;
        }
        addText(s, ctx, node);
      }

      // Parent displays whose in-flow children are stacked top to bottom in document order (not "table",
      // whose footer may render last, nor flex or grid, which can reorder).
      const STACKED = new Set(["block", "flow-root", "list-item", "table-row-group", "table-header-group",
        "table-footer-group"]);

      // ``cs`` (the parent's style) allows a shortcut in viewport mode: once an in-flow child lies wholly
      // below the clip, the later siblings are walked light without measuring each one (the rows of a big
      // table below the fold).
      function walkChildren(el, ctx, cursor, cs) {
        const root = el.shadowRoot;
        if (root) {
          for (let c = root.firstChild; c; c = c.nextSibling) walk(c, ctx, cursor);
          return;
        }
        if (cs && !full && STACKED.has(cs.display) && cs.columnCount === "auto" && el.localName !== "slot") {
          for (let c = el.firstChild; c; c = c.nextSibling) {
            if (walk(c, ctx, cursor) === true) {
              const lctx = { light: true, base: ctx };
              for (let d = c.nextSibling; d; d = d.nextSibling) if (d.nodeType === 1) walkLight(d, lctx);
              return;
            }
          }
          return;
        }
        if (el.localName === "slot") {
          const assigned = el.assignedNodes({ flatten: true });
          if (assigned.length) {
            for (const c of assigned) walk(c, ctx, cursor);
            return;
          }
        }
        for (let c = el.firstChild; c; c = c.nextSibling) walk(c, ctx, cursor);
      }

      // Viewport mode: an element entirely outside the viewport is walked "light" (no text, no elements),
      // looking only for positioned descendants (fixed dialogs, absolute popups) that may still show. It
      // reads styles, never boxes: getBoundingClientRect costs several times getComputedStyle per element.
      // Past LIGHT_STYLE_MAX elements even styles are not read (huge off-screen tables): the rest is only
      // recorded as seen, so scrolling to it does not mark it new; a popup placed from deep inside such a
      // subtree is then missed until it is scrolled to.
      function walkLight(el, ctx) {
        const tag = el.localName;
        if (SKIP.has(tag) || el === state.overlay) return;
        if (lightLeft <= 0) return markSeen(el);
        lightLeft--;
        if (el.getAttribute("aria-hidden") === "true" || el.hasAttribute("inert")) return;
        const cs = getComputedStyle(el);
        if (cs.display === "none") return;
        if (!seen.has(el)) {
          seen.add(el);
          if (!first) fresh.add(el);
        }
        const pos = cs.position;
        if (pos === "fixed" || pos === "absolute" || pos === "sticky") {
          walkElement(el, tag, cs, ctx.base, "auto");
          return;
        }
        if (!LEAF.has(tag)) lightChildren(el, ctx);
      }

      function markSeen(el) {
        if (!seen.has(el)) {
          seen.add(el);
          if (!first) fresh.add(el);
        }
        for (let c = el.firstElementChild; c; c = c.nextElementSibling) markSeen(c);
        if (el.shadowRoot) for (let c = el.shadowRoot.firstElementChild; c; c = c.nextElementSibling) markSeen(c);
      }

      function lightChildren(el, ctx) {
        const root = el.shadowRoot;
        if (!root && el.localName === "slot") {
          const assigned = el.assignedNodes({ flatten: true });
          if (assigned.length) {
            for (const a of assigned) if (a.nodeType === 1) walkLight(a, ctx);
            return;
          }
        }
        for (let c = root ? root.firstChild : el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) walkLight(c, ctx);
      }

      function walk(node, ctx, pcursor) {
        const type = node.nodeType;
        if (type === 3) return onText(node, ctx);
        if (type !== 1) return;
        const el = node;
        const tag = el.localName;
        if (SKIP.has(tag) || el === state.overlay) return;
        if (el.getAttribute("aria-hidden") === "true" || el.hasAttribute("inert")) return;
        if (tag === "br") return flush();
        if (!full && tag !== "iframe" && tag !== "frame") {
          // viewport mode, boxes first: a laid-out element entirely outside the clip is walked light
          // without reading its style (what the table rows below the fold of a big page are)
          // (a box outside the clip but inside the viewport may be position:fixed, which escapes the clip:
          // that case takes the full path below, which reads the style)
          const r = el.getBoundingClientRect();
          if ((r.width > 0 || r.height > 0) && !intersects(r, ctx.clip) && (ctx.clip === view || !intersects(r, view))) {
            if (!seen.has(el)) {
              seen.add(el);
              if (!first) fresh.add(el);
            }
            flush();
            if (!LEAF.has(tag)) lightChildren(el, { light: true, base: ctx });
            if (r.top < ctx.clip.b) return false;
            // below the clip: in normal flow, every later sibling is below too (the caller checks the flow)
            const cs = getComputedStyle(el);
            return cs.float === "none" && (cs.position === "static" || cs.position === "relative");
          }
        }
        const cs = getComputedStyle(el);
        if (cs.display === "none") return;
        if (!seen.has(el)) {
          seen.add(el);
          if (!first) fresh.add(el);
        }
        walkElement(el, tag, cs, ctx, pcursor);
      }

      function walkElement(el, tag, cs, ctx, pcursor) {
        const display = cs.display;
        const contents = display === "contents";
        const inline = display === "inline";
        const blockish = !contents && !inline && !display.startsWith("inline") && display !== "table-cell";
        const softSep = contents || inline ? "" : display === "table-cell" ? " | " : blockish ? "" : " ";
        if (blockish) flush(); else if (softSep) soft(softSep);
        const transparent = ctx.transparent || cs.opacity === "0";
        const visible = !transparent && cs.visibility === "visible";
        const overflow = cs.overflowX !== "visible" || cs.overflowY !== "visible";
        const position = cs.position;
        const clip = position === "fixed" ? view : ctx.clip;
        const isFrame = tag === "iframe" || tag === "frame";
        const cursor = cs.cursor;
        const reason = visible && !contents && !isFrame ? interactiveReason(el, tag, cs, pcursor, cursor, tracked) : "";
        // measure only what needs a box: candidates, clipping containers, frames, images, and (in viewport
        // mode) block boxes, to skip whole subtrees that are off screen
        const tbl = !contents && (tag === "table" || TABLE_ROLES.has((el.getAttribute("role") || "").trim().toLowerCase()));
        const measure = !contents && (reason || overflow || isFrame || tbl || tag === "img" || (!full && !inline));
        const r = measure ? el.getBoundingClientRect() : null;
        const hasBox = !!r && r.width > 0 && r.height > 0;
        // clipped to (almost) nothing: screen-reader-only text, collapsed panels
        const clipped = !!r && overflow && (r.width <= 1 || r.height <= 1);
        const vis = visible && !clipped;
        const inView = hasBox && intersects(r, clip);

        if (!full && hasBox && !inView && !isFrame) {
          // entirely off screen: walk light (no text, no elements) unless something positioned shows up inside
          if (!LEAF.has(tag)) lightChildren(el, { light: true, base: ctx });
          if (blockish) flush();
          return;
        }

        if (tbl && vis && hasBox && (full || inView) && dataTable(el, tag)) {
          flush();
          items.push([3, ctx.depth, tables.length, Math.round(r.left), Math.round(r.top), Math.round(r.width),
            Math.round(r.height), inView ? 1 : 0]);
          tables.push(el);
        }
        let rec = null;
        if (vis && hasBox && (full || inView) && !isFrame) {
          let scroll = null;
          if (overflow && tag !== "body" && tag !== "html") scroll = scrollInfo(el, cs);
          if ((reason || scroll) && !(inView && isCovered(el, r, clip))) {
            flush();
            const dis = FORM_TAGS.has(tag) ? el.matches(":disabled") : el.getAttribute("aria-disabled") === "true";
            // an editor, whatever else made it interactive (a contenteditable button is still typed into)
            const editable = reason === "editable" || (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable));
            rec = { el, tag, cs, scroll, r, inView, dis, editable, texts: [], idx: els.length };
            els.push(null);
            nodes.push(el);
            items.push([0, ctx.depth, rec.idx]);
          }
        }
        if (isFrame) {
          if (hasBox && vis && (full || inView)) {
            const k = frameEls.indexOf(el);
            if (k >= 0) {
              flush();
              const cx = r.left + el.clientLeft + parseFloat(cs.paddingLeft || "0");
              const cy = r.top + el.clientTop + parseFloat(cs.paddingTop || "0");
              items.push([2, ctx.depth, k, cx, cy, Math.max(r.left, clip.l), Math.max(r.top, clip.t),
                Math.min(r.right, clip.r), Math.min(r.bottom, clip.b)]);
            }
          }
          return;
        }
        if (tag === "img" && vis && hasBox && (full || inView)) {
          const alt = el.getAttribute("alt");
          if (alt && (rec || ctx.owner)) {
            flush();
            items.push([1, rec ? ctx.depth + 1 : ctx.depth, clean(alt), Math.round(r.left), Math.round(r.top),
              Math.round(r.width), Math.round(r.height), inView ? 1 : 0]);
            (rec || ctx.owner).texts.push(items.length - 1);
          }
        }
        if (!LEAF.has(tag)) {
          let nctx = ctx;
          const nclip = r && overflow ? { l: Math.max(clip.l, r.left), t: Math.max(clip.t, r.top),
            r: Math.min(clip.r, r.right), b: Math.min(clip.b, r.bottom) } : clip;
          const nvis = visible && !clipped;
          // the text of a <label> that names a listed control is printed on the control's line, not here
          const mute = rec ? false : ctx.mute || (tag === "label" && vis && labelIsNamed(el, view, full));
          if (rec || nclip !== ctx.clip || nvis !== ctx.vis || transparent !== ctx.transparent || mute !== !!ctx.mute) {
            nctx = { owner: rec || ctx.owner, depth: rec ? ctx.depth + 1 : ctx.depth, clip: nclip, vis: nvis, transparent, light: false, mute };
          }
          walkChildren(el, nctx, cursor, cs);
        }
        if (rec) finish(rec);
        if (blockish) flush(); else if (softSep) soft(softSep);
      }

      function finish(rec) {
        flush();
        const { el, tag } = rec;
        let text = "";
        let owned = 0;
        for (const k of rec.texts) owned += items[k][2].length + 1;
        const absorb = !rec.scroll && owned <= TEXT_ABSORB_MAX + 1;
        if (absorb) {
          text = rec.texts.map((k) => items[k][2]).join(" ");
          for (const k of rec.texts) items[k] = null;
        }
        if (tag === "input" && (el.type === "submit" || el.type === "button" || el.type === "reset")) text = clean(el.value, VALUE_MAX);
        if (tag === "textarea" || tag === "select") text = "";
        const cname = text ? null : controlName(el);
        const attrs = buildAttrs(el, tag, text, rec, rec.cs, rec.scroll, cname);
        // (no text of its own and no element listed inside: a container of named buttons is not an icon)
        const bare = !text && !rec.texts.length && els.length === rec.idx + 1;
        if (bare && !cname && !LABELABLE.has(tag) && !attrs.some((a) => ICON_NAMED_BY.has(a[0]))) {
          const icon = iconName(el);
          if (icon) attrs.push(["icon", clean(icon, ATTR_MAX)]);
        }
        const isNew = fresh.has(el);
        const r = rec.r;
        // the line is built on the Python side from tag, attrs, text and name (sending both the line and the
        // attributes doubled the JSON of a big full-page snapshot)
        const out = {
          i: rec.idx, tag, text, a: attrs,
          box: [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)],
          v: rec.inView ? 1 : 0,
        };
        const role = el.getAttribute("role");
        if (role) out.role = role;
        if (cname) out.name = cname.name;
        if (isNew) out.n = 1;
        if (rec.dis) out.dis = 1;
        if (tag === "a" && el.href) out.href = el.href;
        if (el.id) out.id = el.id;
        if (rec.sensitive) out.s = 1;
        // what a <label> activates, for the approval policy: a click on it is a click on its control
        if (tag === "label" && el.control) out.ctl = controlWords(el.control);
        // the form a control belongs to (this frame's forms numbered in document order of first use), whether
        // it submits it, and whether it is required: what a submit would send empty (agent/loops.py)
        const form = FORM_TAGS.has(tag) ? el.form : null;
        if (form) {
          if (!formIds.has(form)) formIds.set(form, formIds.size);
          out.f = formIds.get(form);
          if (el.type === "submit" || (tag === "input" && el.type === "image")) out.sub = 1;
          if (el.required) out.req = 1;
        }
        els[rec.idx] = out;
      }

      const start = document.body || document.documentElement;
      const rootCtx = { owner: null, depth: 0, clip: view, vis: true, transparent: false, light: false };
      if (start) {
        if (start === document.body) {
          const bcs = getComputedStyle(start);
          rootCtx.vis = bcs.visibility === "visible";
          seen.add(start);
          walkChildren(start, rootCtx, bcs.cursor);
        } else {
          walk(start, rootCtx, "auto");
        }
      }
      flush();
      state.els = nodes;
      state.tables = tables;
      state.id = arg.id;
      const se = document.scrollingElement || de;
      const body = document.body;
      const out = {
        first,
        url: location.href,
        title: document.title,
        vw, vh,
        sx: Math.round(window.scrollX), sy: Math.round(window.scrollY),
        pw: Math.max(se ? se.scrollWidth : 0, body ? body.scrollWidth : 0),
        ph: Math.max(se ? se.scrollHeight : 0, body ? body.scrollHeight : 0),
        items: items.filter((x) => x !== null),
        els,
        ms: 0,
      };
      // facts of the top document read in the same call, so a step costs one round trip to the page, not two:
      // its announcing regions and headings (the outcome line's facts: outcome.py) and the actions it calls
      // for (offers.py: the first step's read chooses the run's tools)
      if (arg.facts && window === window.top) {
        out.announced = announced();
        out.calls = pageCalls();
      }
      // the top document's HTTP status when the server answered it with an error: its navigation entry's, so
      // it holds for the start page, a typed URL, a click and a form alike, and not for a later same-page change
      if (window === window.top) {
        const nav = performance.getEntriesByType("navigation")[0];
        if (nav && nav.responseStatus >= 400) out.status = nav.responseStatus;
      }
      out.ms = Math.round((performance.now() - t0) * 100) / 100;
      return JSON.stringify(out);
    }

    // A table of data, not of layout: not marked presentational, holding a row, and no table inside it (a page
    // laid out with tables names the innermost ones, which hold the data).
    function dataTable(el, tag) {
      const role = (el.getAttribute("role") || "").trim().toLowerCase();
      if (role === "presentation" || role === "none" || el.querySelector(TABLE_SEL)) return false;
      return tag === "table" ? el.rows.length > 0 : !!el.querySelector("[role=row]");
    }

    // ==== Operations for actions ==================================================================================
    // Element lookup by index (checking the snapshot id), scrolling the nearest scrollable container,
    // element boxes and frame offsets for screenshots, the numbered overlay.
    function get(i, id) {
      if (id != null && state.id !== id) return "stale";
      if (typeof i !== "number" || i < 0 || i >= state.els.length) return "missing";
      const el = state.els[i];
      if (!el || !el.isConnected) return "detached";
      return el;
    }

    // ==== Aiming a click =========================================================================================
    // A click goes to a point as a trusted mouse event (Python's ``page.mouse``) when this finds a point where
    // the element itself is hit, nothing around it animates, and it is in view: the checks Playwright's click
    // makes, minus its wait for two animation frames (most of a click's cost). Any doubt answers null, and Python
    // uses Playwright's click. A press check armed here makes sure the press lands on the element: the first press
    // event of the gesture is let through only when its path contains the element; otherwise it and the rest of
    // the gesture are stopped here (nothing happens, Python falls back). It disarms itself after 2 s.
    const PRESS_EVENTS = ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "auxclick", "dblclick", "contextmenu"];
    const check = { installed: false, el: null, at: 0, state: "" };
    function composedContains(outer, node) {
      for (let n = node; n; n = n.parentNode || (n.host !== undefined ? n.host : null)) if (n === outer) return true;
      return false;
    }
    function firstRect(el) {
      for (const r of el.getClientRects()) if (r.width >= 1 && r.height >= 1) return r;
      return null;
    }
    function onPress(ev) {
      if (!check.el) return;
      if (performance.now() - check.at > 2000) { check.el = null; return; }
      if (check.state === "") check.state = ev.composedPath().includes(check.el) ? "reached" : "blocked";
      if (check.state === "blocked") {
        ev.preventDefault();
        ev.stopImmediatePropagation();
      }
    }
    function aim(arg) {
      const el = get(arg.i, arg.id);
      if (typeof el === "string") return null;
      try {
        // the document's animations, and each shadow root's on the way up (a document does not list those)
        for (let root = el.getRootNode(); root; root = root.host ? root.host.getRootNode() : null) {
          for (const a of root.getAnimations()) {
            const t = a.playState === "running" && a.effect ? a.effect.target : null;
            if (t && composedContains(t, el)) return null;
          }
        }
        let r = firstRect(el);
        if (!r) return null;
        const vw = document.documentElement.clientWidth || innerWidth;
        const vh = document.documentElement.clientHeight || innerHeight;
        if (r.left < 0 || r.top < 0 || r.right > vw || r.bottom > vh) {
          el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
          r = firstRect(el);
          if (!r) return null;
        }
        const left = Math.max(r.left, 0), top = Math.max(r.top, 0);
        const right = Math.min(r.right, vw), bottom = Math.min(r.bottom, vh);
        if (right - left < 1 || bottom - top < 1) return null;
        const x = (left + right) / 2, y = (top + bottom) / 2;
        let hit = document.elementFromPoint(x, y);
        while (hit && hit.shadowRoot) {
          const inner = hit.shadowRoot.elementFromPoint(x, y);
          if (!inner || inner === hit) break;
          hit = inner;
        }
        if (!hit || !composedContains(el, hit)) return null;
        if (!check.installed) {
          for (const t of PRESS_EVENTS) window.addEventListener(t, onPress, true);
          check.installed = true;
        }
        Object.assign(check, { el, at: performance.now(), state: "" });
        return { x, y };
      } catch (e) {
        return null;
      }
    }
    // Disarms the press check: "reached" (the press landed on the element), "blocked" (it did not, and was stopped), or
    // "unseen" (no press reached this world's listener: the page stopped it first, or it went elsewhere).
    function aimed() {
      const state = check.el ? check.state || "unseen" : "unseen";
      check.el = null;
      return state;
    }

    function canScroll(el, dx, dy) {
      const cs = getComputedStyle(el);
      const okY = (cs.overflowY === "auto" || cs.overflowY === "scroll" || cs.overflowY === "overlay");
      const okX = (cs.overflowX === "auto" || cs.overflowX === "scroll" || cs.overflowX === "overlay");
      if (dy && okY && el.scrollHeight - el.clientHeight > 4) return true;
      if (dx && okX && el.scrollWidth - el.clientWidth > 4) return true;
      return false;
    }

    function parentOf(el) {
      if (el.parentElement) return el.parentElement;
      const root = el.getRootNode();
      return root && root.host ? root.host : null;
    }

    function pos(el) {
      if (!el) {
        const se = document.scrollingElement || document.documentElement;
        return { x: window.scrollX, y: window.scrollY, w: se.scrollWidth, h: se.scrollHeight, cw: se.clientWidth, ch: se.clientHeight };
      }
      return { x: el.scrollLeft, y: el.scrollTop, w: el.scrollWidth, h: el.scrollHeight, cw: el.clientWidth, ch: el.clientHeight };
    }

    // Scroll the element's nearest scrollable container, or the document. arg: {axis: "x"|"y", i: local index
    // or null, px: pixels or null, pages: number (used when px is null), sign: 1|-1, id: snapshot id}.
    function scrollOp(arg) {
      const y = arg.axis !== "x";
      let target = null; // null = this document
      let kind = "page";
      if (arg.i != null) {
        const el = get(arg.i, arg.id);
        if (typeof el === "string") return { error: el };
        for (let cur = el; cur && cur !== document.body && cur !== document.documentElement; cur = parentOf(cur)) {
          if (canScroll(cur, !y, y)) { target = cur; kind = "container"; break; }
        }
        if (!target) kind = "page-from-element";
      } else {
        const p = pos(null);
        const pageCan = y ? p.h - p.ch > 4 : p.w - p.cw > 4;
        if (!pageCan) {
          // The document does not scroll (app-shell layouts): use the largest visible scrollable container.
          const vw = window.innerWidth, vh = window.innerHeight;
          let best = null, area = 0;
          for (const el of document.querySelectorAll("*")) {
            if (!canScroll(el, !y, y)) continue;
            const r = el.getBoundingClientRect();
            const a = Math.max(0, Math.min(r.right, vw) - Math.max(r.left, 0)) *
              Math.max(0, Math.min(r.bottom, vh) - Math.max(r.top, 0));
            if (a > area) { area = a; best = el; }
          }
          if (best) { target = best; kind = "fallback"; }
        }
      }
      const b = pos(target);
      const size = y ? (target ? b.ch : window.innerHeight) : (target ? b.cw : window.innerWidth);
      const amount = (arg.px != null ? arg.px : Math.round((arg.pages || 0) * size)) * (arg.sign < 0 ? -1 : 1);
      const opts = y ? { top: amount, left: 0, behavior: "instant" } : { left: amount, top: 0, behavior: "instant" };
      if (target) target.scrollBy(opts); else window.scrollBy(opts);
      const a = pos(target);
      const after = y ? a.y : a.x;
      const max = y ? a.h - a.ch : a.w - a.cw;
      return {
        kind,
        self: arg.i != null && target === state.els[arg.i],
        tag: target ? target.localName : "",
        elId: target && target.id ? target.id : "",
        requested: amount,
        moved: Math.round(after - (y ? b.y : b.x)),
        after: Math.round(after),
        remaining: Math.max(0, Math.round(max - after)),
        size: Math.round(size),
      };
    }

    function rects() {
      const out = [];
      state.els.forEach((el, i) => {
        if (!el || !el.isConnected) return;
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0) out.push([i, r.left, r.top, r.width, r.height]);
      });
      return out;
    }

    // The text of what pages announce results in (status, alert and live regions, outputs, open dialogs) and
    // of headings, each visible one: [kind, text], at most 40. Read here, not in the page's world, so a page's
    // hooks on innerText or querySelectorAll cannot change what the agent is told a region says.
    function announced() {
      const sel = "[role=status],[role=alert],[role=alertdialog],[aria-live]:not([aria-live=off]),output," +
        "dialog[open],[role=dialog],h1,h2,h3,h4,h5,h6";
      const out = [];
      for (const el of document.querySelectorAll(sel)) {
        if (out.length >= 40) break;
        if (!el.getClientRects().length) continue;
        const text = (el.innerText || "").slice(0, 2000).trim();
        if (text) out.push([/^h[1-6]$/.test(el.localName) ? "heading" : "status", text]);
      }
      return out;
    }

    // Empties the document's local and session storage (the origin's, shared with the page's world) from here,
    // where a page that replaced Storage.prototype.clear cannot keep its storage for the next row of a map.
    function clearStorage() {
      let cleared = true;
      for (const name of ["localStorage", "sessionStorage"]) {
        try { window[name].clear(); } catch (e) { cleared = false; } // an opaque origin has none to clear
      }
      return cleared;
    }

    // What the page calls for beyond the everyday actions (offers.py): a table or grid (extract_table), a link
    // or button that opens a new tab (switch_tab), content wider than the window (scroll_horizontally).
    function pageCalls() {
      const has = (sel) => !!document.querySelector(sel);
      const calls = [];
      if (has("table, [role=table], [role=grid], [role=treegrid]")) calls.push("extract_table");
      if (has('[target=_blank], [onclick*="window.open"]')) calls.push("switch_tab");
      const root = document.documentElement; // none while a tab is still being made (a popup storm)
      if (root && root.scrollWidth > window.innerWidth + 8) calls.push("scroll_horizontally");
      return calls;
    }

    function frameOffsets(arg) {
      return (arg.frames || []).map((k) => {
        const el = state.frames.get(k);
        if (!el || !el.isConnected) return null;
        const r = el.getBoundingClientRect();
        const cs = getComputedStyle(el);
        return [r.left + el.clientLeft + parseFloat(cs.paddingLeft || "0"), r.top + el.clientTop + parseFloat(cs.paddingTop || "0")];
      });
    }

    const COLORS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000",
      "#808000", "#000075", "#f032e6", "#469990"];

    function overlay(arg) {
      removeOverlay();
      const c = document.createElement("div");
      c.id = "__notebook_agent_overlay__"; // a name for people reading the DOM; found by reference, not by id
      state.overlay = c;
      c.setAttribute("aria-hidden", "true");
      c.style.cssText = "position:absolute;left:0;top:0;width:0;height:0;overflow:visible;z-index:2147483647;pointer-events:none;";
      const sx = window.scrollX, sy = window.scrollY;
      for (const [label, x, y, w, h] of arg.boxes) {
        const color = COLORS[label % COLORS.length];
        const b = document.createElement("div");
        b.style.cssText = `position:absolute;left:${x + sx}px;top:${y + sy}px;width:${w}px;height:${h}px;` +
          `border:2px solid ${color};box-sizing:border-box;background:${color}1a;pointer-events:none;`;
        const t = document.createElement("span");
        t.textContent = String(label);
        t.style.cssText = `position:absolute;top:-2px;right:-2px;background:${color};color:#fff;` +
          "font:bold 11px/13px monospace;padding:0 3px;border-radius:2px;pointer-events:none;";
        b.appendChild(t);
        c.appendChild(b);
      }
      (document.documentElement || document.body).appendChild(c);
      return arg.boxes.length;
    }

    function removeOverlay() {
      if (state.overlay) state.overlay.remove();
      state.overlay = null;
      return true;
    }

    // ==== Hiding values in screenshots ============================================================================
    // Finds every element matching ``arg.selector`` (sensitive fields) and every text node and form field of
    // this document (open shadow roots included) whose text, value or placeholder reads as one of the needles
    // of ``arg.rule``, and paints an opaque box (magenta, like Playwright's ``mask``) over each, in a top-layer
    // element shown last (above the page's own dialogs and popovers), positioned in document coordinates so a
    // full-page picture is covered too. Answers the number of boxes. "unhide" removes it and answers whether it
    // stayed as painted until then (a page that removed or hid it made the picture unsafe). ``arg.extra`` adds
    // boxes (document coordinates) where the painted layer shows a value the DOM does not (painted.py).
    //
    // Text is compared as Python's core/text/lookalike.py compares it, by the rule it sends (``page_rule``): one
    // character at a time, dropped when in ``rule.strip`` (format and invisible characters, white space), else
    // NFKD, and for a folded needle (all of them now) case-folded (``rule.fold``, else ``toLowerCase``) and NFKD
    // again. Each character
    // of the normal form remembers the UTF-16 span of the character it came from, so a match maps back to the
    // range of the original text (the invisible characters inside it included).
    const FIELDS = "input, textarea, select";
    function lookalikes(rule) {
      const strip = new RegExp(rule.strip, "gu");
      const stripOne = new RegExp("^" + rule.strip + "$", "u");
      const foldTable = rule.fold || {};
      const cache = [new Map(), new Map()];
      const piece = (ch, fold) => {
        const known = cache[+fold].get(ch);
        if (known !== undefined) return known;
        let out = "";
        if (!stripOne.test(ch)) {
          out = ch.normalize("NFKD");
          if (fold) {
            let f = "";
            for (const c of out) f += foldTable[c] !== undefined ? foldTable[c] : c.toLowerCase();
            out = f.normalize("NFKD");
          }
          out = out.replace(strip, "");
        }
        cache[+fold].set(ch, out);
        return out;
      };
      const ASCII = /^[\x00-\x7f]*$/, anyStrip = new RegExp(rule.strip, "u");
      // the normal form of ``s``: the text alone first (native replace, most text holds no needle), and where
      // each of its UTF-16 units came from only for text that holds one. ASCII text with nothing to drop (no
      // white space) is its own normal form but for case.
      const OTHER = new RegExp("[^\\x00-\\x7f]|" + rule.strip, "gu");
      const OTHER_OR_UPPER = new RegExp("[^\\x00-\\x7f]|[A-Z]|" + rule.strip, "gu");
      const normal = (s, fold) => {
        if (ASCII.test(s) && !anyStrip.test(s)) return { text: fold ? s.toLowerCase() : s, ascii: true };
        const text = fold
          ? s.replace(OTHER_OR_UPPER, (ch) => (ch >= "A" && ch <= "Z" ? ch.toLowerCase() : piece(ch, true)))
          : s.replace(OTHER, (ch) => piece(ch, false));
        return { text, ascii: false };
      };
      const mapped = (s, fold) => {
        const from = [], to = [];
        for (let i = 0; i < s.length;) {
          const n = s.codePointAt(i) > 0xffff ? 2 : 1;
          const part = piece(s.slice(i, i + n), fold);
          for (let k = 0; k < part.length; k++) { from.push(i); to.push(i + n); }
          i += n;
        }
        return { from, to };
      };
      const needles = (rule.needles || []).filter((nf) => Array.isArray(nf) && typeof nf[0] === "string" && nf[0]);
      // the [start, end) spans of ``s`` that read as a needle, left to right per needle
      const spans = (s, needle, fold, forms) => {
        const form = forms[+fold] || (forms[+fold] = normal(s, fold));
        const out = [];
        let i = form.text.indexOf(needle);
        if (i < 0) return out;
        const where = form.ascii ? null : form.where || (form.where = mapped(s, fold));
        for (; i >= 0; i = form.text.indexOf(needle, i + needle.length)) {
          const last = i + needle.length - 1;
          out.push(where ? [where.from[i], where.to[last]] : [i, last + 1]);
        }
        return out;
      };
      const count = (s, nf, forms) => (typeof s === "string" && s.length ? spans(s, nf[0], nf[1], forms || []).length : 0);
      const has = (s) => typeof s === "string" && s.length > 0 && needles.some((nf) => count(s, nf) > 0);
      return { needles, spans, count, has };
    }

    function hide(arg) {
      unhide();
      const find = lookalikes(arg.rule || {});
      const values = find.needles;
      const selector = arg.selector || "";
      const extra = Array.isArray(arg.extra) ? arg.extra : [];
      if (!values.length && !selector && !extra.length) return 0;
      const boxes = [];
      const add = (r) => { if (r.width > 0 && r.height > 0) boxes.push([r.left, r.top, r.width, r.height]); };
      // boxes where the painted layer shows a value (browser/page/painted.py), in document coordinates
      for (const [x, y, w, h] of extra) add({ left: x - window.scrollX, top: y - window.scrollY, width: w, height: h });
      const has = find.has;
      const count = find.count;
      const light = new Map(values.map((v) => [v, 0])); // occurrences met inside single text nodes of the document
      // the document's text is searched once first: its text nodes are then searched only for the values it
      // holds (most pages hold none, and normalising every node would cost more than the whole picture)
      const doc = document.documentElement;
      const all = doc ? doc.textContent : "", allForms = [];
      const inLight = values.filter((v) => count(all, v, allForms) > 0);
      const visit = (root) => {
        // the selector names fields: matching it against the fields alone spares matching its many parts
        // against every element (10 ms on a 21,000-element page, 1 ms this way)
        if (selector) for (const el of root.querySelectorAll(FIELDS)) if (el.matches(selector)) add(el.getBoundingClientRect());
        // with no values to find, only elements are visited (for their shadow roots): text nodes are skipped
        const show = values.length ? NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT : NodeFilter.SHOW_ELEMENT;
        const walker = document.createTreeWalker(root, show);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          if (n.nodeType === 3) {
            const s = n.data;
            const wanted = root === doc ? inLight : values;
            if (s.length < 1 || !wanted.length) continue;
            const forms = [];
            for (const v of wanted) {
              for (const [start, end] of find.spans(s, v[0], v[1], forms)) {
                if (root === document.documentElement) light.set(v, light.get(v) + 1);
                range.setStart(n, start);
                range.setEnd(n, end);
                for (const r of range.getClientRects()) add(r);
              }
            }
            continue;
          }
          const tag = n.localName;
          if (!values.length) {
            // only the fields the selector names: nothing to read here
          } else if (tag === "input" || tag === "textarea") {
            if (has(n.value) || has(n.getAttribute("placeholder"))) add(n.getBoundingClientRect());
          } else if (tag === "select") {
            if ([...n.selectedOptions].some((o) => has(o.text))) add(n.getBoundingClientRect());
          } else if (tag === "img" && has(n.getAttribute("alt"))) {
            add(n.getBoundingClientRect());
          }
          if (n.shadowRoot) visit(n.shadowRoot);
        }
      };
      // an occurrence split over several text nodes (<b>sec</b>ret): the element whose children each hold
      // less than all of it is painted over whole
      const split = (el, v) => {
        const total = count(el.textContent, v);
        if (!total) return;
        let inner = 0;
        for (const c of el.childNodes) inner += count(c.textContent || "", v);
        if (inner < total) add(el.getBoundingClientRect());
        for (const c of el.children) split(c, v);
      };
      if (doc) {
        visit(doc);
        for (const v of inLight) if (count(all, v, allForms) > light.get(v)) split(doc, v);
      }
      if (!boxes.length) return 0;
      const sx = window.scrollX, sy = window.scrollY;
      const c = document.createElement("notebook-agent-mask");
      c.setAttribute("aria-hidden", "true");
      const fixed = "display:block!important;visibility:visible!important;opacity:1!important;filter:none!important;" +
        "transform:none!important;clip-path:none!important;mix-blend-mode:normal!important;pointer-events:none!important;";
      c.style.cssText = fixed + "position:absolute!important;left:0!important;top:0!important;width:0!important;" +
        "height:0!important;margin:0!important;padding:0!important;border:0!important;overflow:visible!important;" +
        "background:transparent!important;z-index:2147483647!important;inset:0 auto auto 0!important;";
      for (const [x, y, w, h] of boxes) {
        const b = document.createElement("notebook-agent-mask");
        b.style.cssText = fixed + `position:absolute!important;left:${x + sx - 2}px!important;` +
          `top:${y + sy - 2}px!important;width:${w + 4}px!important;height:${h + 4}px!important;` +
          "background:#f0f!important;margin:0!important;padding:0!important;border:0!important;";
        c.appendChild(b);
      }
      let top = false;
      try {
        c.setAttribute("popover", "manual");
        (document.documentElement || document).appendChild(c);
        c.showPopover();
        top = true;
      } catch (e) {
        if (!c.isConnected) (document.documentElement || document).appendChild(c);
      }
      state.mask = { el: c, top, count: boxes.length };
      return boxes.length;
    }

    function unhide() {
      const m = state.mask;
      state.mask = null;
      if (!m) return null;
      let intact = m.el.isConnected && m.el.childElementCount === m.count;
      if (intact && m.top) { try { intact = m.el.matches(":popover-open"); } catch (e) { intact = false; } }
      if (intact) {
        const cs = getComputedStyle(m.el);
        intact = cs.display !== "none" && cs.visibility === "visible" && cs.opacity === "1";
      }
      m.el.remove();
      return intact;
    }

    // Registers ``root`` (a child frame's <iframe>, the scope Python queried from) under the token Python uses
    // for that frame, so the snapshot can tell where each child frame sits without a handle argument.
    function registerFrame(root, k) {
      if (root && (root.localName === "iframe" || root.localName === "frame")) state.frames.set(k, root);
      return null;
    }

    return {
      call(arg, root) {
        switch (arg && arg.op) {
          case "snapshot": return snapshot(arg);
          case "get": {
            // ``gone``: a missing element answers with a detached stand-in, so a chain after it (fingerprint.js
            // describe) answers at once instead of leaving Playwright waiting for a match
            const el = get(arg.i, arg.id);
            if (typeof el !== "string") return el;
            return arg.gone ? document.createElement("notebook-agent-gone") : null;
          }
          case "check": { const el = get(arg.i, arg.id); return typeof el === "string" ? el : "ok"; }
          case "table": { // a named table of the snapshot ``id``, or nothing (another snapshot, or gone)
            const t = state.id === arg.id ? state.tables[arg.i] : null;
            return t && t.isConnected ? t : null;
          }
          case "indexOf": return root && state.id === arg.id ? state.els.indexOf(root) : -1;
          case "frame": return registerFrame(root, arg.k);
          case "scroll": return scrollOp(arg);
          case "rects": return rects();
          case "announced": return announced();
          case "clearStorage": return clearStorage();
          case "frameOffsets": return frameOffsets(arg);
          case "overlay": return overlay(arg);
          case "removeOverlay": return removeOverlay();
          case "hide": return hide(arg);
          case "unhide": return unhide();
          case "aim": return aim(arg);
          case "aimed": return aimed();
          default: throw new Error("unknown page API op " + JSON.stringify(arg && arg.op));
        }
      },
    };
  }
})()
