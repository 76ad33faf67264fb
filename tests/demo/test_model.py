"""The offline demo model: its rules read hand-written state messages and pick the right action."""

from __future__ import annotations

import json
from typing import Any

import pytest

from notebook_agent.core.messages import AssistantMessage, UserMessage
from notebook_agent.core.model import Context, StreamOptions
from notebook_agent.demo import (
    DELETE_TASK,
    DEMO_TASK,
    UNKNOWN_TASK_TEXT,
    demo_model,
    demo_model_for,
    task_kind_for,
)
from notebook_agent.demo.state import listed_products, parse_element, parse_state
from notebook_agent.llm.scripted import ScriptedModel

BASE = "http://127.0.0.1:8765/"
NAV = """[0]<a>Northwind Outfitters />
[1]<a>Shop all />
[2]<a>Cart (0) />
[3]<a>Account />"""


def history_block(steps: list[dict[str, Any]]) -> str:
    lines = []
    for i, s in enumerate(steps, start=1):
        lines += [
            f"<step_{i}>",
            f"Evaluation of Previous Step: {s.get('evaluation', '')}",
            f"Memory: {s.get('memory', '')}",
            f"Next Goal: {s.get('next_goal', '')}",
            f"Action: {s['action']} {json.dumps(s.get('args', {}), separators=(', ', ': '))}",
            f"Action Results: {s.get('result', 'ok')}",
            f"</step_{i}>",
        ]
    return "\n".join(lines)


def state_message(
    task: str, title: str, path: str, body: str, history: list[dict[str, Any]] | None = None, step: int = 0
) -> str:
    """A state message shaped like the page agent's (see agent.state.state_message and the snapshot header)."""
    steps = history or []
    step = step or len(steps) + 1
    return "\n".join(
        [
            "<agent_state>",
            "<user_request>",
            task,
            "</user_request>",
            "<step_info>",
            f"Step {step} of 20. Current time: 2025-01-01 12:00",
            "</step_info>",
            "</agent_state>",
            "",
            "<agent_history>",
            *([history_block(steps)] if steps else []),
            *([f"<sys>Page navigated to → {BASE}{path}</sys>"] if steps else []),
            "</agent_history>",
            "",
            "<browser_state>",
            f"Current page: [{title}]({BASE}{path})",
            "[Start of page]",
            body.strip("\n"),
            "[End of page]",
            "</browser_state>",
        ]
    )


def decide(model: ScriptedModel, text: str) -> dict[str, Any]:
    """Ask the model's rule for one step; returns the AgentOutput arguments."""
    assert model.on_exhausted is not None and callable(model.on_exhausted)
    response = model.on_exhausted(Context(system_prompt="sys", messages=[UserMessage(content=text)]))
    assert response.name == "AgentOutput"  # type: ignore[union-attr]
    args = response.arguments  # type: ignore[union-attr]
    assert isinstance(args, dict)
    for key in ("evaluation_previous_goal", "memory", "next_goal"):
        assert isinstance(args[key], str) and args[key], f"{key} should be filled in"
    assert len(args["action"]) == 1
    return args


def action(args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    ((name, value),) = args["action"].items()
    return name, value


HOME = (
    NAV
    + """
Gear for every trail
Outdoor clothing, packs and travel audio. Free standard shipping on every order.
[4]<input type=search name=q placeholder=Search products aria-label=Search products />
[5]<button>Search />
Popular categories
[6]<a>Headphones />
[7]<a>Jackets />"""
)

RESULTS = (
    NAV
    + """
[4]<input type=search name=q placeholder=Search products aria-label=Search products value=wireless headphones />
[5]<button>Search />
3 results for “wireless headphones”
Sort by
[6]<select name=sort value=Relevance options=Relevance|Price: low to high|Price: high to low|Customer rating />
[7]<a>AeroBeat Wireless Headphones />
Headphones · ★ 4.4 (312 reviews)
$89.00
[8]<a>Summit ANC Wireless Headphones />
Headphones · ★ 4.7 (528 reviews)
$149.00
[9]<a>TrailSound Wireless Headphones Lite />
Headphones · ★ 4.1 (88 reviews)
$54.99"""
)

PRODUCT = (
    NAV
    + """
[4]<a>Headphones />
TrailSound Wireless Headphones Lite
$54.99
★ 4.1 · 88 reviews
Light on-ear Bluetooth headphones for the trail: 180 g, sweat resistant, 20-hour battery.
[5]<button type=button>Add to cart />"""
)

PRODUCT_TITLE = "TrailSound Wireless Headphones Lite · Northwind Outfitters"
EXPECTED = "Cheapest wireless headphones: TrailSound Wireless Headphones Lite at $54.99"


# -- parsing --------------------------------------------------------------------------------------------------------
def test_parse_element_lines() -> None:
    e = parse_element("\t*[12]<input type=search name=q placeholder=Search products value=shoes />", 3)
    assert e is not None
    assert (e.index, e.tag, e.new, e.line, e.text) == (12, "input", True, 3, "")
    assert e.attrs == {"type": "search", "name": "q", "placeholder": "Search products", "value": "shoes"}
    b = parse_element("[5]<button>Add to cart />")
    assert b is not None and (b.tag, b.text, b.attrs) == ("button", "Add to cart", {})
    d = parse_element("[8]<button type=button disabled>Checkout />")
    assert d is not None and d.attrs == {"type": "button disabled"} and d.text == "Checkout"
    assert parse_element("$54.99") is None
    c = parse_element("[9]<input type=checkbox name=terms checked=false />I agree to the terms")
    assert c is not None and c.attrs == {"type": "checkbox", "name": "terms", "checked": "false"}
    assert c.text == "I agree to the terms"
    assert parse_element("Headphones · ★ 4.1 (88 reviews)") is None


def test_parse_state_reads_header_history_and_products() -> None:
    history = [{"action": "input_text", "args": {"index": 4, "text": "wireless headphones"}, "memory": "m1"}]
    state = parse_state(state_message(DEMO_TASK, "Search · Northwind Outfitters", "search.html?q=x", RESULTS, history))
    assert state.task == DEMO_TASK
    assert state.url == BASE + "search.html?q=x" and state.page == "search.html" and state.query == {"q": "x"}
    assert state.title == "Search · Northwind Outfitters"
    assert (state.step, state.max_steps) == (2, 20)
    assert [e.index for e in state.elements] == list(range(10))
    assert state.history[0].action == "input_text" and state.history[0].args["index"] == 4
    assert state.history[0].memory == "m1" and state.history[0].result == "ok"
    assert state.notes == [f"Page navigated to → {BASE}search.html?q=x"]
    products = [(p.name, p.price, p.element.index) for p in listed_products(state)]
    assert products == [
        ("AeroBeat Wireless Headphones", 89.0, 7),
        ("Summit ANC Wireless Headphones", 149.0, 8),
        ("TrailSound Wireless Headphones Lite", 54.99, 9),
    ]


def test_parse_state_without_browser_state() -> None:
    state = parse_state("just a question")
    assert state.url == "" and state.elements == [] and state.history == []


# -- the shop task --------------------------------------------------------------------------------------------------
def test_types_the_query_into_the_search_box() -> None:
    args = decide(demo_model(), state_message(DEMO_TASK, "Northwind Outfitters", "", HOME))
    assert action(args) == ("input_text", {"index": 4, "text": "wireless headphones"})


def test_indices_are_read_not_assumed() -> None:
    shifted = HOME.replace("[4]<input", "\t*[41]<input").replace("[5]<button>Search", "\t*[42]<button>Search")
    args = decide(demo_model(), state_message(DEMO_TASK, "Northwind Outfitters", "index.html", shifted))
    assert action(args) == ("input_text", {"index": 41, "text": "wireless headphones"})


def test_submits_the_search_once_typed() -> None:
    typed = HOME.replace("Search products />", "Search products value=wireless headphones />")
    history = [{"action": "input_text", "args": {"index": 4, "text": "wireless headphones"}}]
    args = decide(demo_model(), state_message(DEMO_TASK, "Northwind Outfitters", "", typed, history))
    assert action(args) == ("click_element_by_index", {"index": 5})
    assert "wireless headphones" in args["evaluation_previous_goal"]


def test_presses_enter_without_a_search_button() -> None:
    typed = HOME.replace("Search products />", "Search products value=wireless headphones />").replace(
        "[5]<button>Search />\n", ""
    )
    args = decide(demo_model(), state_message(DEMO_TASK, "Northwind Outfitters", "", typed))
    assert action(args) == ("send_keys", {"keys": "Enter"})


def test_goes_home_when_there_is_no_search_box() -> None:
    args = decide(demo_model(), state_message(DEMO_TASK, "Cart", "cart.html", NAV + "\nYour cart is empty."))
    assert action(args) == ("go_to_url", {"url": BASE + "index.html"})


def test_sorts_the_results_by_price_first() -> None:
    args = decide(
        demo_model(),
        state_message(DEMO_TASK, "Search", "search.html?q=wireless+headphones", RESULTS, [{"action": "x"}]),
    )
    assert action(args) == ("select_dropdown_option", {"index": 6, "text": "Price: low to high"})
    assert "$54.99" in args["memory"] and "AeroBeat Wireless Headphones $89.00" in args["memory"]


def test_opens_the_cheapest_after_sorting() -> None:
    sorted_results = (
        RESULTS.replace("value=Relevance", "value=Price: low to high")
        .replace("[7]<a>AeroBeat", "*[9]<a>AeroBeat")
        .replace("[9]<a>TrailSound", "*[7]<a>TrailSound")
    )
    history = [{"action": "select_dropdown_option", "args": {"index": 6, "text": "Price: low to high"}}]
    text = state_message(
        DEMO_TASK, "Search", "search.html?q=wireless+headphones&sort=price-asc", sorted_results, history
    )
    args = decide(demo_model(), text)
    assert action(args) == ("click_element_by_index", {"index": 7})
    assert args["memory"].startswith(EXPECTED + ".")
    assert "sorted by price" in args["evaluation_previous_goal"]


def test_picks_the_cheapest_wireless_headphones_not_the_cheapest_item() -> None:
    # A wider search: the wired headphones and the earbuds are cheaper but are not wireless headphones.
    body = (
        RESULTS
        + """
[10]<a>Harbor Studio Wired Headphones />
Headphones · ★ 4.3 (201 reviews)
$39.00
[11]<a>Pebble Wireless Earbuds />
Earbuds · ★ 3.9 (143 reviews)
$29.99"""
    ).replace(
        "[6]<select name=sort value=Relevance options=Relevance|Price: low to high|Price: high to low|"
        "Customer rating />\n",
        "",
    )
    text = state_message(DEMO_TASK, "Search", "search.html?q=wireless+headphones", body)
    assert action(decide(demo_model(), text)) == ("click_element_by_index", {"index": 9})


def test_prices_inside_link_text_are_understood() -> None:
    body = NAV + "\n[4]<a>Budget Wireless Headphones $12.50 />\n[5]<a>Pro Wireless Headphones $1,299.00 />"
    text = state_message(DEMO_TASK, "Search", "search.html?q=wireless+headphones", body)
    args = decide(demo_model(), text)
    assert action(args) == ("click_element_by_index", {"index": 4})
    assert "Budget Wireless Headphones at $12.50" in args["memory"]


def test_no_matching_results_fails_cleanly() -> None:
    body = NAV + "\n0 results for “wireless headphones”\nNo products match your search."
    args = decide(demo_model(), state_message(DEMO_TASK, "Search", "search.html?q=wireless+headphones", body))
    name, value = action(args)
    assert name == "done" and value["success"] is False


def test_adds_the_product_to_the_cart() -> None:
    history = [{"action": "click_element_by_index", "args": {"index": 9}, "memory": EXPECTED + ". Compared: ..."}]
    args = decide(demo_model(), state_message(DEMO_TASK, PRODUCT_TITLE, "product.html?id=p03", PRODUCT, history))
    assert action(args) == ("click_element_by_index", {"index": 5})
    assert "$54.99" in args["evaluation_previous_goal"]


def test_reports_name_and_price_once_added() -> None:
    added = PRODUCT + "\nAdded to cart: TrailSound Wireless Headphones Lite. Your cart has 1 item.\n[6]<a>View cart />"
    history = [
        {"action": "click_element_by_index", "args": {"index": 9}, "memory": EXPECTED + ". Compared: ..."},
        {"action": "click_element_by_index", "args": {"index": 5}, "memory": EXPECTED + "."},
    ]
    text = state_message(
        DEMO_TASK, PRODUCT_TITLE, "product.html?id=p03", added.replace("Cart (0)", "Cart (1)"), history
    )
    args = decide(demo_model(), text)
    assert action(args) == ("done", {"text": EXPECTED, "success": True})


def test_product_page_without_memory_reads_the_page() -> None:
    added = PRODUCT + "\nAdded to cart: TrailSound Wireless Headphones Lite. Your cart has 1 item."
    args = decide(demo_model(), state_message(DEMO_TASK, PRODUCT_TITLE, "product.html?id=p03", added))
    assert action(args) == ("done", {"text": EXPECTED, "success": True})


def test_last_step_gives_up() -> None:
    args = decide(demo_model(), state_message(DEMO_TASK, "Northwind Outfitters", "", HOME, step=20))
    name, value = action(args)
    assert name == "done" and value["success"] is False


def test_repeating_itself_gives_up() -> None:
    same = {"action": "input_text", "args": {"index": 4, "text": "wireless headphones"}}
    args = decide(demo_model(), state_message(DEMO_TASK, "Northwind Outfitters", "", HOME, [same, same, same]))
    name, value = action(args)
    assert name == "done" and value["success"] is False and "stuck" in value["text"]


# -- the delete-account task ----------------------------------------------------------------------------------------
ACCOUNT = (
    NAV.replace("[3]<a>Account />", "[3]<a aria-current=page>Account />")
    + """
Your account
Full name
[4]<input type=text name=fullname value=Alex Rivera />
Email
[5]<input type=email name=email value=alex.rivera@example.com />
[6]<input type=checkbox name=newsletter checked=true />
Send me the monthly newsletter
[7]<button>Save changes />
Danger zone
Deleting your account removes your profile and order history. This cannot be undone.
[8]<button type=button>Delete account />"""
)
CLICK_DELETE = {"action": "click_element_by_index", "args": {"index": 8}}


def test_delete_opens_the_account_page_from_the_nav() -> None:
    args = decide(demo_model("delete_account"), state_message(DELETE_TASK, "Northwind Outfitters", "", HOME))
    assert action(args) == ("click_element_by_index", {"index": 3})


def test_delete_goes_to_the_account_page_without_a_link() -> None:
    body = "Welcome\n[0]<button>Search />"
    args = decide(demo_model("delete_account"), state_message(DELETE_TASK, "Shop", "index.html", body))
    assert action(args) == ("go_to_url", {"url": BASE + "account.html"})


def test_delete_clicks_the_delete_button() -> None:
    history = [{"action": "click_element_by_index", "args": {"index": 3}}]
    args = decide(
        demo_model("delete_account"), state_message(DELETE_TASK, "Your account", "account.html", ACCOUNT, history)
    )
    assert action(args) == ("click_element_by_index", {"index": 8})


@pytest.mark.parametrize(
    "result",
    [
        'Blocked by the approval policy: acts on "Delete account", which looks destructive or final (delete)',
        "The user denied this action: not today",
        "Denied: no answer within 300 seconds.",
    ],
)
def test_delete_stops_when_the_click_was_denied(result: str) -> None:
    history = [{"action": "click_element_by_index", "args": {"index": 3}}, {**CLICK_DELETE, "result": result}]
    args = decide(
        demo_model("delete_account"), state_message(DELETE_TASK, "Your account", "account.html", ACCOUNT, history)
    )
    name, value = action(args)
    assert name == "done" and value["success"] is False
    assert value["text"].startswith("I did not delete your account") and "denied" in value["text"]


def test_delete_reports_success() -> None:
    body = (
        NAV + "\nYour account has been deleted\nYour profile and order history were removed.\n[4]<a>Back to the shop />"
    )
    history = [{"action": "click_element_by_index", "args": {"index": 3}}, {**CLICK_DELETE, "result": "Clicked"}]
    args = decide(
        demo_model("delete_account"),
        state_message(DELETE_TASK, "Account deleted", "account-deleted.html", body, history),
    )
    name, value = action(args)
    assert name == "done" and value["success"] is True


def test_delete_notices_a_dismissed_confirmation() -> None:
    body = ACCOUNT + "\nAccount deletion cancelled."
    history = [{"action": "click_element_by_index", "args": {"index": 3}}, {**CLICK_DELETE, "result": "Clicked"}]
    args = decide(
        demo_model("delete_account"), state_message(DELETE_TASK, "Your account", "account.html", body, history)
    )
    name, value = action(args)
    assert name == "done" and value["success"] is False and "cancelled" in value["text"]


# -- choosing a model -----------------------------------------------------------------------------------------------
def test_task_kinds() -> None:
    assert task_kind_for(DEMO_TASK) == "shop"
    assert task_kind_for("  find the CHEAPEST wireless headphones\n") == "shop"
    assert task_kind_for(DELETE_TASK) == "delete_account"
    assert task_kind_for("Book me a flight to Oslo") is None
    assert demo_model_for(DEMO_TASK).id == "offline-shop"
    assert demo_model_for(DELETE_TASK).id == "offline-delete-account"
    assert demo_model().provider == "demo"
    with pytest.raises(ValueError, match="shop, delete_account"):
        demo_model("nope")


async def stream_once(model: ScriptedModel, text: str) -> AssistantMessage:
    final = None
    async for event in model.stream(Context("sys", [UserMessage(content=text)]), StreamOptions()):
        if event.type in ("done", "error"):
            final = event.partial
    assert final is not None
    return final


async def test_unknown_task_model_gives_up_politely() -> None:
    model = demo_model_for("Book me a flight to Oslo")
    message = await stream_once(model, state_message("Book me a flight to Oslo", "Northwind Outfitters", "", HOME))
    assert message.stop_reason == "toolUse"
    (tool_call,) = message.tool_calls
    assert tool_call.name == "AgentOutput"
    assert tool_call.arguments["action"] == {"done": {"text": UNKNOWN_TASK_TEXT, "success": False}}


async def test_demo_model_streams_every_step() -> None:
    """The model never runs out: it answers any number of steps (the script is only the fallback rule)."""
    model = demo_model()
    for _ in range(3):
        message = await stream_once(model, state_message(DEMO_TASK, "Northwind Outfitters", "", HOME))
        (tool_call,) = message.tool_calls
        assert tool_call.arguments["action"] == {"input_text": {"index": 4, "text": "wireless headphones"}}
    assert len(model.requests) == 3


def test_delete_never_retries_a_denied_click() -> None:
    history = [
        {"action": "click_element_by_index", "args": {"index": 3}},
        {**CLICK_DELETE, "result": "The user denied this action: no"},
        {"action": "go_back", "args": {}, "result": "Went back"},
    ]
    text = state_message(DELETE_TASK, "Your account", "account.html", ACCOUNT, history)
    name, value = action(decide(demo_model("delete_account"), text))
    assert name == "done" and value["success"] is False and "denied" in value["text"]


def test_a_product_that_is_not_wireless_headphones_is_left() -> None:
    body = NAV + "\n[4]<a>Footwear />\nCascade Hiking Boots\n$159.00\n[5]<button type=button>Add to cart />"
    text = state_message(DEMO_TASK, "Cascade Hiking Boots · Northwind Outfitters", "product.html?id=p07", body)
    assert action(decide(demo_model(), text)) == (
        "go_to_url",
        {"url": BASE + "search.html?q=wireless+headphones&sort=price-asc"},
    )


def test_an_error_result_shows_in_the_evaluation() -> None:
    history = [{"action": "click_element_by_index", "args": {"index": 9}, "result": "Error: element [9] is gone"}]
    args = decide(demo_model(), state_message(DEMO_TASK, PRODUCT_TITLE, "product.html?id=p03", PRODUCT, history))
    assert action(args) == ("click_element_by_index", {"index": 5})
    assert args["evaluation_previous_goal"].startswith("Failed: element [9] is gone")
