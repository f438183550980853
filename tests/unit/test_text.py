"""What no database can store never reaches one."""
import json

from bot.domain.text import storable


def test_nul_characters_are_removed_and_lone_surrogates_replaced():
    assert storable("a\x00b\x00") == "ab"
    hostile = json.loads('"x\\ud800y\\udfffz"')  # what a JSON body can carry
    assert storable(hostile) == "x\ufffdy\ufffdz"
    assert storable(hostile).encode("utf-8")  # encodable now


def test_ordinary_text_is_untouched_emoji_and_all():
    text = "Résumé 🍴 — `code`\n\tdone"
    assert storable(text) == text
