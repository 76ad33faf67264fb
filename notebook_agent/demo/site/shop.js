// Northwind Outfitters: catalogue, cart (localStorage) and the per-page scripts. Deterministic: no random, no timers.
"use strict";

const CATALOG = JSON.parse(`[
  {"id": "p01", "name": "AeroBeat Wireless Headphones", "category": "Headphones", "price": 89.00, "rating": 4.4, "reviews": 312,
   "tags": "audio bluetooth over-ear", "description": "Over-ear Bluetooth headphones with 30-hour battery life and a fold-flat design for travel."},
  {"id": "p02", "name": "Summit ANC Wireless Headphones", "category": "Headphones", "price": 149.00, "rating": 4.7, "reviews": 528,
   "tags": "audio bluetooth noise cancelling over-ear", "description": "Active noise cancelling, 40-hour battery, and a hard case that survives a backpack."},
  {"id": "p03", "name": "TrailSound Wireless Headphones Lite", "category": "Headphones", "price": 54.99, "rating": 4.1, "reviews": 88,
   "tags": "audio bluetooth on-ear lightweight", "description": "Light on-ear Bluetooth headphones for the trail: 180 g, sweat resistant, 20-hour battery."},
  {"id": "p04", "name": "Harbor Studio Wired Headphones", "category": "Headphones", "price": 39.00, "rating": 4.3, "reviews": 201,
   "tags": "audio cable over-ear", "description": "Closed-back studio headphones with a detachable 3.5 mm cable. No battery to charge."},
  {"id": "p05", "name": "Pebble Wireless Earbuds", "category": "Earbuds", "price": 29.99, "rating": 3.9, "reviews": 143,
   "tags": "audio bluetooth in-ear", "description": "Pocket-sized Bluetooth earbuds with a charging case."},
  {"id": "p06", "name": "Ridgeline Rain Jacket", "category": "Jackets", "price": 129.00, "rating": 4.6, "reviews": 97,
   "tags": "clothing waterproof shell", "description": "A 2.5-layer waterproof shell with pit zips and a helmet-compatible hood."},
  {"id": "p07", "name": "Cascade Hiking Boots", "category": "Footwear", "price": 159.00, "rating": 4.5, "reviews": 265,
   "tags": "shoes waterproof leather", "description": "Waterproof leather mid boots with a grippy lugged sole."},
  {"id": "p08", "name": "Merino Trail Socks (2-pack)", "category": "Footwear", "price": 24.00, "rating": 4.8, "reviews": 410,
   "tags": "clothing wool", "description": "Cushioned merino wool socks that stay fresh for days."},
  {"id": "p09", "name": "Basecamp 28L Daypack", "category": "Bags", "price": 79.00, "rating": 4.4, "reviews": 156,
   "tags": "backpack hiking", "description": "A 28-litre daypack with a hydration sleeve and a padded laptop pocket."},
  {"id": "p10", "name": "Lumen 400 Headlamp", "category": "Gear", "price": 34.50, "rating": 4.2, "reviews": 73,
   "tags": "light rechargeable", "description": "400 lumens, red night mode and USB-C charging."},
  {"id": "p11", "name": "Insulated Steel Bottle 750 ml", "category": "Gear", "price": 27.00, "rating": 4.6, "reviews": 389,
   "tags": "water bottle", "description": "Keeps drinks cold for 24 hours or hot for 12."},
  {"id": "p12", "name": "Wireless Charging Pad", "category": "Gear", "price": 25.00, "rating": 3.8, "reviews": 52,
   "tags": "electronics qi charger", "description": "A slim Qi charging pad for phones and earbuds."}
]`);

const SORTS = [
  ["relevance", "Relevance"],
  ["price-asc", "Price: low to high"],
  ["price-desc", "Price: high to low"],
  ["rating", "Customer rating"],
];
const SHIPPING = {
  standard: { label: "Standard (5-7 days)", price: 0 },
  express: { label: "Express (2 days)", price: 9.99 },
  overnight: { label: "Overnight", price: 24.99 },
};
const CART_KEY = "northwind.cart";
const ORDER_KEY = "northwind.lastOrder";
const SEQ_KEY = "northwind.orderSeq";
const PROFILE_KEY = "northwind.profile";
const DEFAULT_PROFILE = { name: "Alex Rivera", email: "alex.rivera@example.com", newsletter: true };

function $(id) { return document.getElementById(id); }
function money(n) { return "$" + n.toFixed(2); }
function product(id) { return CATALOG.find((p) => p.id === id) || null; }
function param(name) { return new URLSearchParams(location.search).get(name) || ""; }
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}
function readJSON(key, fallback) {
  try { const v = JSON.parse(localStorage.getItem(key)); return v == null ? fallback : v; } catch (e) { return fallback; }
}
function writeJSON(key, value) { localStorage.setItem(key, JSON.stringify(value)); }

// -- cart: [{id, qty}] ----------------------------------------------------------------------------------------
function getCart() { return readJSON(CART_KEY, []).filter((l) => product(l.id) && l.qty > 0); }
function setCart(lines) { writeJSON(CART_KEY, lines.filter((l) => l.qty > 0)); updateCartCount(); }
function cartCount() { return getCart().reduce((n, l) => n + l.qty, 0); }
function cartSubtotal() { return getCart().reduce((s, l) => s + product(l.id).price * l.qty, 0); }
function addToCart(id) {
  const lines = getCart();
  const line = lines.find((l) => l.id === id);
  if (line) line.qty += 1; else lines.push({ id, qty: 1 });
  setCart(lines);
}
function updateCartCount() { const c = $("cart-count"); if (c) c.textContent = String(cartCount()); }

// -- search -----------------------------------------------------------------------------------------------------
function matches(p, query) {
  const hay = (p.name + " " + p.category + " " + p.tags).toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
}
function sortProducts(list, sort) {
  const out = list.slice();
  if (sort === "price-asc") out.sort((a, b) => a.price - b.price);
  else if (sort === "price-desc") out.sort((a, b) => b.price - a.price);
  else if (sort === "rating") out.sort((a, b) => b.rating - a.rating);
  return out;
}
function searchPage() {
  const q = param("q").trim();
  let sort = param("sort");
  if (!SORTS.some(([v]) => v === sort)) sort = "relevance";
  $("q").value = q;
  const select = $("sort");
  for (const [value, label] of SORTS) select.append(el("option", { value, text: label }));
  select.value = sort;
  function render() {
    const found = sortProducts(CATALOG.filter((p) => matches(p, q)), select.value);
    $("summary").textContent = q
      ? `${found.length} result${found.length === 1 ? "" : "s"} for “${q}”`
      : `All products (${found.length})`;
    const list = $("results");
    list.replaceChildren();
    for (const p of found) {
      list.append(el("li", { "data-id": p.id },
        el("a", { href: "product.html?id=" + p.id, text: p.name }),
        el("span", { class: "meta", text: `${p.category} · ★ ${p.rating.toFixed(1)} (${p.reviews} reviews)` }),
        el("span", { class: "price", text: money(p.price) })));
    }
    $("empty").hidden = found.length > 0;
  }
  select.addEventListener("change", () => {
    const params = new URLSearchParams(location.search);
    params.set("sort", select.value);
    history.replaceState(null, "", "search.html?" + params.toString());
    render();
  });
  render();
}

// -- product ----------------------------------------------------------------------------------------------------
function productPage() {
  const p = product(param("id"));
  if (!p) {
    document.title = "Product not found · Northwind Outfitters";
    $("name").textContent = "Product not found";
    $("details").hidden = true;
    return;
  }
  document.title = p.name + " · Northwind Outfitters";
  $("name").textContent = p.name;
  $("crumb").textContent = p.category;
  $("crumb").href = "search.html?q=" + encodeURIComponent(p.category.toLowerCase());
  $("price").textContent = money(p.price);
  $("rating").textContent = `★ ${p.rating.toFixed(1)} · ${p.reviews} reviews`;
  $("description").textContent = p.description;
  $("add").addEventListener("click", () => {
    addToCart(p.id);
    const n = cartCount();
    $("status").replaceChildren(
      `Added to cart: ${p.name}. Your cart has ${n} item${n === 1 ? "" : "s"}. `,
      el("a", { href: "cart.html", text: "View cart" }));
  });
}

// -- cart -------------------------------------------------------------------------------------------------------
function cartPage() {
  function render() {
    const lines = getCart();
    const body = $("cart-lines");
    body.replaceChildren();
    for (const line of lines) {
      const p = product(line.id);
      const qty = el("input", { type: "number", min: "0", max: "99", value: String(line.qty), name: "qty-" + p.id,
        "aria-label": "Quantity for " + p.name });
      qty.addEventListener("change", () => {
        const n = Math.max(0, Math.min(99, parseInt(qty.value, 10) || 0));
        setCart(getCart().map((l) => (l.id === p.id ? { id: l.id, qty: n } : l)));
        render();
      });
      const remove = el("button", { type: "button", class: "secondary", text: "Remove", "aria-label": "Remove " + p.name });
      remove.addEventListener("click", () => { setCart(getCart().filter((l) => l.id !== p.id)); render(); });
      body.append(el("tr", { "data-id": p.id },
        el("td", {}, el("a", { href: "product.html?id=" + p.id, text: p.name })),
        el("td", { text: money(p.price) }),
        el("td", {}, qty),
        el("td", { class: "line-total", text: money(p.price * line.qty) }),
        el("td", {}, remove)));
    }
    const empty = lines.length === 0;
    $("cart-table").hidden = empty;
    $("empty").hidden = !empty;
    $("subtotal").textContent = money(cartSubtotal());
    $("checkout").disabled = empty;
  }
  $("checkout").addEventListener("click", () => { location.href = "checkout.html"; });
  render();
}

// -- checkout ---------------------------------------------------------------------------------------------------
function checkoutPage() {
  const lines = getCart();
  if (lines.length === 0) {
    $("checkout-form").hidden = true;
    $("empty").hidden = false;
    return;
  }
  const summary = $("order-items");
  for (const l of lines) {
    const p = product(l.id);
    summary.append(el("li", { text: `${l.qty} × ${p.name}: ${money(p.price * l.qty)}` }));
  }
  const select = $("shipping");
  for (const [value, s] of Object.entries(SHIPPING)) {
    select.append(el("option", { value, text: `${s.label}: ${s.price ? money(s.price) : "free"}` }));
  }
  function totals() {
    const ship = SHIPPING[select.value].price;
    $("order-subtotal").textContent = money(cartSubtotal());
    $("order-shipping").textContent = ship ? money(ship) : "free";
    $("order-total").textContent = money(cartSubtotal() + ship);
  }
  select.addEventListener("change", totals);
  totals();
  $("checkout-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.target;
    const name = form.elements.fullname.value.trim();
    const email = form.elements.email.value.trim();
    const address = form.elements.address.value.trim();
    const errors = [];
    if (!name) errors.push("Enter your full name.");
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) errors.push("Enter a valid email address.");
    if (!address) errors.push("Enter a shipping address.");
    if (!form.elements.terms.checked) errors.push("Accept the terms of sale to place the order.");
    const box = $("errors");
    box.replaceChildren(...errors.map((t) => el("li", { text: t })));
    if (errors.length) return;
    const seq = readJSON(SEQ_KEY, 1000) + 1;
    writeJSON(SEQ_KEY, seq);
    const ship = SHIPPING[select.value];
    writeJSON(ORDER_KEY, {
      number: "NW-" + seq, name, email, address, shipping: ship.label,
      items: getCart().map((l) => ({ name: product(l.id).name, qty: l.qty, price: product(l.id).price })),
      total: Math.round((cartSubtotal() + ship.price) * 100) / 100,
    });
    setCart([]);
    location.href = "confirmation.html";
  });
}

function confirmationPage() {
  const order = readJSON(ORDER_KEY, null);
  if (!order) {
    $("message").textContent = "There is no recent order.";
    $("details").hidden = true;
    return;
  }
  $("message").textContent = `Thank you, ${order.name}! Your order has been placed.`;
  $("order-number").textContent = order.number;
  $("order-email").textContent = order.email;
  $("order-total").textContent = money(order.total);
  $("order-shipping").textContent = order.shipping;
  for (const i of order.items) $("order-items").append(el("li", { text: `${i.qty} × ${i.name}` }));
}

// -- account ----------------------------------------------------------------------------------------------------
function accountPage() {
  const profile = Object.assign({}, DEFAULT_PROFILE, readJSON(PROFILE_KEY, {}));
  const form = $("profile-form");
  form.elements.fullname.value = profile.name;
  form.elements.email.value = profile.email;
  form.elements.newsletter.checked = !!profile.newsletter;
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    writeJSON(PROFILE_KEY, {
      name: form.elements.fullname.value.trim(),
      email: form.elements.email.value.trim(),
      newsletter: form.elements.newsletter.checked,
    });
    $("status").textContent = "Profile saved.";
  });
  $("delete-account").addEventListener("click", () => {
    if (!confirm("Delete your Northwind account? This permanently removes your profile and order history.")) {
      $("status").textContent = "Account deletion cancelled.";
      return;
    }
    for (const key of [PROFILE_KEY, CART_KEY, ORDER_KEY]) localStorage.removeItem(key);
    location.href = "account-deleted.html";
  });
}

// -- price list ---------------------------------------------------------------------------------------------------
function pricesPage() {
  const rows = $("price-rows");
  for (const p of CATALOG) {
    rows.append(el("tr", {},
      el("td", {}, el("a", { href: "product.html?id=" + p.id, text: p.name })),
      el("td", { text: p.category }),
      el("td", { text: money(p.price) }),
      el("td", { text: p.rating.toFixed(1) })));
  }
}

const PAGES = {
  prices: pricesPage, search: searchPage, product: productPage, cart: cartPage, checkout: checkoutPage,
  confirmation: confirmationPage, account: accountPage,
};
updateCartCount();
const pageScript = PAGES[document.body.dataset.page];
if (pageScript) pageScript();
