"""Pricing every answer (bot/domain/pricing.py): writes split by TTL at their own rates, what caching saved,
a model missing from the table counted as unpriced and never guessed."""
import pytest

from bot.domain.model import Usage
from bot.domain.pricing import MICROS, PRICES, price_of, priced


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
