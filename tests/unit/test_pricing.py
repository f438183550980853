"""Pricing every answer (bot/domain/spend.py): writes split by TTL at their own rates, what caching saved,
a model missing from the table counted as unpriced and never guessed."""
import pytest

from bot.domain.model import Usage
from bot.domain.spend import MICROS, PRICES, price_of, priced


def test_every_model_writes_the_hour_cache_at_twice_its_input_price():
    for name, price in PRICES.items():
        assert price.cache_write_1h == pytest.approx(2 * price.input), name
        assert price.cache_write == pytest.approx(1.25 * price.input), name
        if price.long_prompt:
            band = price.long_prompt[1]
            assert band.cache_write_1h == pytest.approx(2 * band.input), name


def test_writes_are_priced_by_the_ttl_they_went_to():
    # claude-sonnet-5-5: $2 in, $10 out, $0.10 read, $2.50 5-minute write, $4 1-hour write
    usage = Usage(input_tokens=1_000, output_tokens=500, cache_read_tokens=20_000, cache_write_tokens=30_000,
                  cache_write_1h_tokens=10_000)
    expected = (1_000 * 2 + 500 * 10 + 20_000 * 0.10 + 20_000 * 2.50 + 10_000 * 4.00) / MICROS
    assert price_of("claude-sonnet-5-5").of(usage) == pytest.approx(expected)
    answered = priced("claude-sonnet-5-5", usage)
    assert answered.cost_micros == round(expected * MICROS) and answered.unpriced == 0
    # without the cache every one of the 51,000 prompt tokens would have been input
    assert answered.uncached_micros == round((51_000 * 2 + 500 * 10) / MICROS * MICROS)


def test_caching_can_save_or_cost_more_and_the_figures_say_which():
    read_back = priced("claude-sonnet-5-5", Usage(input_tokens=10, cache_read_tokens=90_000))
    assert read_back.uncached_micros - read_back.cost_micros > 0
    written_once = priced("claude-sonnet-5-5", Usage(input_tokens=10, cache_write_tokens=90_000,
                                                     cache_write_1h_tokens=90_000))
    assert written_once.uncached_micros - written_once.cost_micros < 0  # an hour's write never read: 2× paid


def test_a_model_missing_from_the_table_has_no_cost_only_a_count():
    answered = priced("claude-unpriced-test", Usage(input_tokens=1_000, output_tokens=1_000))
    assert (answered.cost_micros, answered.uncached_micros, answered.unpriced) == (0, 0, 1)
    assert priced(None, Usage(1, 1)).unpriced == 1


def test_a_long_prompt_pays_its_band_on_the_hour_writes_too():
    usage = Usage(input_tokens=1_000, cache_write_tokens=100_000, cache_write_1h_tokens=100_000)
    assert price_of("claude-haiku-5-5").of(usage) == pytest.approx((1_000 * 0.50 + 100_000 * 1.00) / MICROS)


def test_priced_usages_add_up():
    one = priced("claude-sonnet-5-5", Usage(input_tokens=1_000))
    two = priced("claude-unpriced-test", Usage(input_tokens=1_000))
    total = one + two
    assert (total.cost_micros, total.unpriced, total.input_tokens) == (one.cost_micros, 1, 2_000)


SECRETS = dict(_env_file=None, slack_bot_token="x", slack_signing_secret="y", anthropic_api_key="z")


def test_the_cache_ttl_and_the_spend_cap_are_settings_whose_nonsense_names_the_variable():
    from bot.config import ConfigError, load_settings
    from bot.domain.caching import CacheMode

    assert load_settings(**SECRETS).threadfork_cache_ttl is CacheMode.AUTO
    assert load_settings(**SECRETS, threadfork_cache_ttl="1h").threadfork_cache_ttl is CacheMode.ONE_HOUR
    with pytest.raises(ConfigError, match="THREADFORK_CACHE_TTL"):
        load_settings(**SECRETS, threadfork_cache_ttl="2h")
    assert load_settings(**SECRETS).channel_defaults().monthly_spend_cap_usd == 0.0  # unset: no cap
    capped = load_settings(**SECRETS, threadfork_monthly_spend_cap_usd="250")
    assert capped.channel_defaults().monthly_spend_cap_usd == 250.0
    with pytest.raises(ConfigError, match="THREADFORK_MONTHLY_SPEND_CAP_USD"):
        load_settings(**SECRETS, threadfork_monthly_spend_cap_usd="-5")


@pytest.mark.parametrize("typed, cap", [("50", 50.0), ("$12.50", 12.5), ("1,000", 1000.0), ("", 0.0), ("none", 0.0)])
def test_a_cap_is_typed_in_dollars_or_left_empty(typed, cap):
    from bot.domain.spend import parse_cap

    assert parse_cap(typed) == cap


@pytest.mark.parametrize("typed", ["lots", "-3", "nan", "2000000"])
def test_a_cap_that_is_no_positive_amount_is_refused(typed):
    from bot.domain.spend import parse_cap

    with pytest.raises(ValueError, match="cap|dollars"):
        parse_cap(typed)


def test_cap_states_and_dollars_read_as_people_expect():
    from bot.domain.spend import CapState, cap_state, dollars

    assert cap_state(None, 10.0) is CapState.NONE and cap_state(5, None) is CapState.NONE
    assert cap_state(7_999_999, 10.0) is CapState.UNDER and cap_state(8_000_000, 10.0) is CapState.NEAR
    assert cap_state(10_000_000, 10.0) is CapState.REACHED
    assert (dollars(0), dollars(4_000), dollars(1_234_567), dollars(-2_000_000)) == ("$0.00", "<$0.01", "$1.23",
                                                                                     "-$2.00")


def test_a_cap_is_shown_in_the_modal_as_typed_and_a_cap_below_a_cent_is_refused():
    from bot.domain.settings import form_value
    from bot.domain.spend import parse_cap

    assert [form_value("monthly_spend_cap_usd", v) for v in (1e6, 123456.78, 12.5, 50.0)] == [
        "1000000", "123456.78", "12.5", "50"]
    for tiny in ("0.001", "0.004"):
        with pytest.raises(ValueError, match=r"\$0\.01"):
            parse_cap(tiny)
    assert parse_cap("0.01") == 0.01


def test_a_turns_worst_case_is_its_input_as_counted_plus_max_tokens_of_output_at_its_models_price():
    from bot.domain.context import Block, ModelInput
    from bot.domain.spend import FILE_TOKENS, ceiling
    model_input = ModelInput("s" * 400, (Block("user", "q" * 4_000), Block("user", "chart.png", kind="image",
                                                                               file_id="file_1")))
    most = ceiling(model_input, 8_192)
    assert (most.input_tokens, most.output_tokens) == (100 + 1_000 + FILE_TOKENS, 8_192)
    assert priced("claude-sonnet-5-5", most).cost_micros == round((2_700 * 2.00 + 8_192 * 10.00))
