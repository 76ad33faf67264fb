"""What work cost: the price table a user extends or overrides in one call, models that run here costing nothing,
an unknown price staying unknown (None) through every sum, and the ledger every view says."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notebook_agent.core.messages import Cost, Usage, UserMessage
from notebook_agent.core.model import Context, StreamOptions, compute_cost
from notebook_agent.llm import get_model
from notebook_agent.llm.ledger import Ledger, cost_text
from notebook_agent.llm.pricing import USER_PRICES, PriceError, prices_for, prices_of, set_prices
from notebook_agent.llm.providers.google import google_usage
from notebook_agent.llm.providers.openai_chat import chat_usage
from notebook_agent.llm.providers.openai_responses import responses_usage
from notebook_agent.llm.scripted import ScriptedModel, call


@pytest.fixture(autouse=True)
def no_prices_set() -> Iterator[None]:
    saved = dict(USER_PRICES)
    USER_PRICES.clear()
    yield
    USER_PRICES.clear()
    USER_PRICES.update(saved)


def test_an_unknown_price_is_an_unknown_cost_never_zero() -> None:
    usage = Usage(input=1_000, output=200)
    compute_cost(usage, None)
    assert usage.cost is None and usage.dollars is None
    total = Usage()
    total.add(Usage(input=10, cost=Cost(total=0.5)))
    total.add(usage)
    total.add(Usage(input=10, cost=Cost(total=0.5)))
    assert total.cost is None and total.tokens == 1_220  # the tokens still count
    assert cost_text(None) == "cost unknown" and "$0" not in Ledger.of(total).text()
    assert cost_text(0.0) == "$0" and cost_text(0.01234) == "$0.0123" and cost_text(4.1) == "$4.10"


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.none() | st.floats(0, 10)), max_size=12))
def test_a_sum_of_ledgers_is_unknown_exactly_when_a_part_is(parts: list[tuple[int, int, float | None]]) -> None:
    usages = [Usage(input=i, output=o, calls=1, cost=None if c is None else Cost(total=c)) for i, o, c in parts]
    total = Usage()
    for u in usages:
        total.add(u)
    ledger = sum((Ledger.of(u) for u in usages), Ledger())
    unknown = any(c is None for _, _, c in parts)
    assert (total.cost is None) == unknown == (ledger.cost is None)
    assert ledger.tokens == total.tokens == sum(i + o for i, o, _ in parts) and ledger.calls == len(parts)
    if not unknown:
        assert ledger.cost == pytest.approx(sum(c for _, _, c in parts if c is not None))
    assert ("cost unknown" in ledger.text()) == unknown


def test_set_prices_extends_and_overrides_the_table_in_one_call() -> None:
    listed = prices_for("gpt-4.1-mini")
    assert listed is not None and prices_for("my-finetune") is None
    set_prices({"gpt-4.1-mini": {"input": 0.3, "output": 1.2}, "my-finetune": {"input": 1.0, "output": 3.0}})
    assert prices_for("gpt-4.1-mini-2025-04-14") == {"input": 0.3, "output": 1.2}  # snapshots share it
    assert prices_for("my-finetune") == {"input": 1.0, "output": 3.0}
    set_prices("ollama", input=0.01)  # a whole provider
    assert prices_for("qwen3", "ollama") == {"input": 0.01}
    set_prices("openai:my-finetune", output=9.0)  # provider:model wins over the bare name
    assert prices_for("my-finetune", "openai") == {"output": 9.0}
    set_prices({"gpt-4.1-mini": None})
    assert prices_for("gpt-4.1-mini") == listed


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        (("m",), {"input": -1.0}, "The input price of 'm' must be a number of dollars per million tokens, 0 or more"),
        (("m",), {"inptu": 1.0}, "Unknown price key 'inptu' for 'm'; the keys are input, output, cache_read"),
        (("m",), {"output": "cheap"}, "The output price of 'm' must be a number"),
        (({"m": 3},), {}, "The prices of 'm' must be a mapping"),
        (("",), {"input": 1.0}, "set_prices needs a model name"),
    ],
)
def test_bad_prices_are_one_sentence_and_nothing_is_set(args: Any, kwargs: Any, message: str) -> None:
    with pytest.raises(PriceError) as caught:
        set_prices(*args, **kwargs)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert USER_PRICES == {}


def test_a_model_here_is_free_a_listed_one_priced_another_unknown_and_set_prices_reaches_built_ones() -> None:
    local = get_model("ollama:qwen3")
    assert prices_of(local) == {}  # runs on this machine: free, its tokens still counted
    assert prices_of(get_model("openai:some-model", base_url="http://127.0.0.1:8080/v1")) == {}
    hosted = get_model("openai:gpt-4.1-mini", api_key="k")
    assert prices_of(hosted) == prices_for("gpt-4.1-mini")
    unknown = get_model("openai:brand-new-model", api_key="k")
    assert prices_of(unknown) is None
    set_prices("openai:brand-new-model", input=2.0, output=8.0)
    assert prices_of(unknown) == {"input": 2.0, "output": 8.0}  # the model built before the call
    assert prices_of(object()) is None  # a model of one's own that says nothing: unknown


def test_reasoning_tokens_are_read_where_providers_report_them() -> None:
    chat = chat_usage(
        {"prompt_tokens": 100, "completion_tokens": 50, "completion_tokens_details": {"reasoning_tokens": 30}}
    )
    assert (chat.input, chat.output, chat.reasoning) == (100, 50, 30)
    responses = responses_usage(
        {"input_tokens": 10, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 25}}
    )
    assert (responses.output, responses.reasoning) == (40, 25)

    class Meta:
        prompt_token_count, cached_content_token_count = 100, 20
        candidates_token_count, thoughts_token_count = 10, 15

    google = google_usage(Meta())
    assert (google.input, google.cache_read, google.output, google.reasoning) == (80, 20, 25, 15)
    ledger = Ledger.of(google)
    assert (ledger.input, ledger.cached, ledger.output, ledger.reasoning, ledger.tokens) == (80, 20, 25, 15, 125)


async def _usage(model: ScriptedModel) -> Usage:
    context = Context(system_prompt="You are terse.", messages=[UserMessage(content="Say hi")])
    final = None
    async for event in model.stream(context, StreamOptions()):
        final = event.partial
    assert final is not None
    return final.usage


async def test_a_scripted_model_counts_and_prices_its_tokens() -> None:
    free = await _usage(ScriptedModel([call("done", text="hi")], counted=True))
    assert free.input > 0 and free.output > 0 and free.dollars == 0  # counted offline, free
    priced = await _usage(ScriptedModel(["hi"], usage=Usage(input=1_000_000), prices={"input": 2.0}))
    assert priced.dollars == pytest.approx(2.0)
    unknown = await _usage(ScriptedModel(["hi"], usage=Usage(input=10), prices=None))
    assert unknown.cost is None
    own = await _usage(ScriptedModel(["hi"], usage=Usage(input=10, cost=Cost(total=0.25)), prices=None))
    assert own.dollars == 0.25  # a usage that says its cost keeps it
    set_prices("scripted", input=1.0)
    assert (await _usage(ScriptedModel(["hi"], usage=Usage(input=1_000_000)))).dollars == pytest.approx(1.0)
