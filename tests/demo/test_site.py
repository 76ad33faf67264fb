"""The demo shop in a real Chromium: search, sort, cart, checkout and account deletion all work."""

from __future__ import annotations

import json
import re

from playwright.async_api import Dialog, Page

from notebook_agent.demo import DemoServer


async def result_names(page: Page) -> list[str]:
    return await page.locator("#results li a").all_inner_texts()


async def result_prices(page: Page) -> list[float]:
    return [float(p.lstrip("$")) for p in await page.locator("#results .price").all_inner_texts()]


async def add_products(page: Page, server: DemoServer, *ids: str) -> None:
    for product_id in ids:
        await page.goto(server.page(f"product.html?id={product_id}"))
        await page.click("#add")


async def test_home_search_leads_to_filtered_results(page: Page, demo_server: DemoServer) -> None:
    await page.goto(demo_server.url)
    assert await page.title() == "Northwind Outfitters"
    await page.fill("input[name=q]", "wireless headphones")
    await page.press("input[name=q]", "Enter")
    await page.wait_for_url(re.compile(r"search\.html\?q=wireless\+headphones$"))
    assert await result_names(page) == [
        "AeroBeat Wireless Headphones",
        "Summit ANC Wireless Headphones",
        "TrailSound Wireless Headphones Lite",
    ]
    assert await result_prices(page) == [89.0, 149.0, 54.99]
    assert await page.input_value("#q") == "wireless headphones"
    assert await page.inner_text("#summary") == "3 results for “wireless headphones”"


async def test_search_filters(page: Page, demo_server: DemoServer) -> None:
    async def count(q: str) -> int:
        await page.goto(demo_server.page(f"search.html?q={q}"))
        return await page.locator("#results li").count()

    assert await count("headphones") == 4  # three wireless and one wired
    assert await count("wireless") == 5  # plus earbuds and a charging pad
    assert await count("WIRELESS+Headphones") == 3
    assert await count("") == 12
    assert await page.inner_text("#summary") == "All products (12)"
    assert await count("kayak") == 0
    assert await page.is_visible("#empty")


async def test_sort_select(page: Page, demo_server: DemoServer) -> None:
    await page.goto(demo_server.page("search.html?q=headphones"))
    options = await page.locator("#sort option").all_inner_texts()
    assert options == ["Relevance", "Price: low to high", "Price: high to low", "Customer rating"]
    assert await page.input_value("#sort") == "relevance"
    await page.select_option("#sort", label="Price: low to high")
    prices = await result_prices(page)
    assert prices == sorted(prices) == [39.0, 54.99, 89.0, 149.0]
    assert page.url.endswith("search.html?q=headphones&sort=price-asc")
    await page.select_option("#sort", label="Price: high to low")
    assert await result_prices(page) == [149.0, 89.0, 54.99, 39.0]
    await page.select_option("#sort", label="Customer rating")
    assert (await result_names(page))[0] == "Summit ANC Wireless Headphones"
    # The sort survives a reload (it is in the URL).
    await page.goto(demo_server.page("search.html?q=wireless+headphones&sort=price-asc"))
    assert await page.input_value("#sort") == "price-asc"
    assert (await result_names(page))[0] == "TrailSound Wireless Headphones Lite"


async def test_product_page_and_add_to_cart_persists(page: Page, demo_server: DemoServer) -> None:
    await page.goto(demo_server.page("search.html?q=wireless+headphones"))
    await page.click("text=TrailSound Wireless Headphones Lite")
    await page.wait_for_url(re.compile(r"product\.html\?id=p03$"))
    assert await page.title() == "TrailSound Wireless Headphones Lite · Northwind Outfitters"
    assert await page.inner_text("#price") == "$54.99"
    assert await page.inner_text("#cart-count") == "0"
    await page.click("text=Add to cart")
    assert await page.inner_text("#status") == (
        "Added to cart: TrailSound Wireless Headphones Lite. Your cart has 1 item. View cart"
    )
    assert await page.inner_text("#cart-count") == "1"
    await page.click("#add")
    assert await page.inner_text("#cart-count") == "2"
    cart = json.loads(await page.evaluate("localStorage.getItem('northwind.cart')"))
    assert cart == [{"id": "p03", "qty": 2}]
    # A new page in the same browser context sees the same cart.
    other = await page.context.new_page()
    await other.goto(demo_server.page("cart.html"))
    assert await other.inner_text("#cart-count") == "2"
    assert await other.input_value("input[name=qty-p03]") == "2"
    assert await other.inner_text("#subtotal") == "$109.98"
    await other.close()


async def test_unknown_product(page: Page, demo_server: DemoServer) -> None:
    await page.goto(demo_server.page("product.html?id=nope"))
    assert await page.inner_text("h1") == "Product not found"
    assert not await page.is_visible("#add")


async def test_cart_quantities_and_remove(page: Page, demo_server: DemoServer) -> None:
    await page.goto(demo_server.page("cart.html"))
    assert await page.is_visible("#empty")
    assert await page.is_disabled("#checkout")
    await add_products(page, demo_server, "p08", "p10")
    await page.goto(demo_server.page("cart.html"))
    assert await page.inner_text("#subtotal") == "$58.50"
    await page.fill("input[name=qty-p08]", "3")
    await page.press("input[name=qty-p08]", "Tab")
    assert await page.inner_text("#subtotal") == "$106.50"
    assert await page.inner_text("#cart-count") == "4"
    assert await page.inner_text("tr[data-id=p08] .line-total") == "$72.00"
    await page.click("button[aria-label='Remove Lumen 400 Headlamp']")
    assert await page.locator("#cart-lines tr").count() == 1
    assert await page.inner_text("#subtotal") == "$72.00"
    await page.fill("input[name=qty-p08]", "0")
    await page.press("input[name=qty-p08]", "Tab")
    assert await page.is_visible("#empty")
    assert await page.is_disabled("#checkout")


async def test_checkout_to_confirmation(page: Page, demo_server: DemoServer) -> None:
    await add_products(page, demo_server, "p03", "p08")
    await page.goto(demo_server.page("cart.html"))
    await page.click("text=Checkout")
    await page.wait_for_url(re.compile(r"checkout\.html$"))
    assert await page.locator("#order-items li").all_inner_texts() == [
        "1 × TrailSound Wireless Headphones Lite: $54.99",
        "1 × Merino Trail Socks (2-pack): $24.00",
    ]
    assert await page.inner_text("#order-total") == "$78.99"
    # Validation: nothing filled in.
    await page.click("text=Place order")
    assert await page.locator("#errors li").count() == 4
    assert page.url.endswith("checkout.html")
    await page.fill("#fullname", "Sam Lee")
    await page.fill("#email", "sam@example.com")
    await page.fill("#address", "1 Harbour Road, Portland")
    await page.select_option("#shipping", label="Express (2 days): $9.99")
    assert await page.inner_text("#order-total") == "$88.98"
    await page.click("text=Place order")
    assert await page.locator("#errors li").all_inner_texts() == ["Accept the terms of sale to place the order."]
    await page.check("#terms")
    await page.click("text=Place order")
    await page.wait_for_url(re.compile(r"confirmation\.html$"))
    assert await page.inner_text("#message") == "Thank you, Sam Lee! Your order has been placed."
    assert await page.inner_text("#order-number") == "NW-1001"
    assert await page.inner_text("#order-total") == "$88.98"
    assert await page.inner_text("#cart-count") == "0"
    # Order numbers count up, deterministically.
    await add_products(page, demo_server, "p11")
    await page.goto(demo_server.page("checkout.html"))
    await page.fill("#fullname", "Sam Lee")
    await page.fill("#email", "sam@example.com")
    await page.fill("#address", "1 Harbour Road, Portland")
    await page.check("#terms")
    await page.click("#place-order")
    await page.wait_for_url(re.compile(r"confirmation\.html$"))
    assert await page.inner_text("#order-number") == "NW-1002"
    assert await page.inner_text("#order-shipping") == "Standard (5-7 days)"


async def test_checkout_with_an_empty_cart(page: Page, demo_server: DemoServer) -> None:
    await page.goto(demo_server.page("checkout.html"))
    assert await page.is_visible("#empty")
    assert not await page.is_visible("#place-order")
    await page.goto(demo_server.page("confirmation.html"))
    assert await page.inner_text("#message") == "There is no recent order."


async def test_account_profile_and_delete(page: Page, demo_server: DemoServer) -> None:
    await page.goto(demo_server.page("index.html"))
    await page.click("header >> text=Account")
    await page.wait_for_url(re.compile(r"account\.html$"))
    assert await page.input_value("#fullname") == "Alex Rivera"
    await page.fill("#fullname", "Alex R.")
    await page.click("text=Save changes")
    assert await page.inner_text("#status") == "Profile saved."
    await page.reload()
    assert await page.input_value("#fullname") == "Alex R."
    color = await page.eval_on_selector("#delete-account", "e => getComputedStyle(e).backgroundColor")
    assert color == "rgb(192, 57, 43)", "the delete button is red"

    messages: list[str] = []

    async def dismiss(dialog: Dialog) -> None:
        messages.append(dialog.message)
        await dialog.dismiss()

    page.once("dialog", dismiss)
    await page.click("text=Delete account")
    assert messages and messages[0].startswith("Delete your Northwind account?")
    assert await page.inner_text("#status") == "Account deletion cancelled."
    assert page.url.endswith("account.html")

    async def accept(dialog: Dialog) -> None:
        await dialog.accept()

    page.once("dialog", accept)
    await page.click("text=Delete account")
    await page.wait_for_url(re.compile(r"account-deleted\.html$"))
    assert await page.inner_text("h1") == "Your account has been deleted"
    assert await page.evaluate("localStorage.getItem('northwind.profile')") is None
