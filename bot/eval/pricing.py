"""What a run cost, for the eval and the bench: the bot's own price table and rules (bot/domain/spend.py,
where every answer is priced as it is recorded), so the eval, the bench's figure 11 and /context price the
same usage the same way."""
from ..domain.spend import PRICES, PRICES_AS_OF, PRICES_SOURCE, Price, cost, price_of, priced  # noqa: F401
