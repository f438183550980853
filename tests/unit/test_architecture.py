"""The domain is pure: no adapter library is imported anywhere under bot/domain; the use cases see the
outside through ports, each a few methods."""
import ast
from pathlib import Path

import bot.domain

FORBIDDEN = {"slack_bolt", "slack_sdk", "anthropic", "sqlalchemy", "apscheduler", "httpx", "httpx2",
             "requests", "psycopg", "gunicorn"}


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_nothing_under_bot_domain_imports_an_adapter_library():
    files = list(Path(bot.domain.__file__).parent.rglob("*.py"))
    assert files
    offenders = {str(f): imported_roots(f) & FORBIDDEN for f in files if imported_roots(f) & FORBIDDEN}
    assert offenders == {}


def test_the_domain_does_not_reach_into_the_adapters():
    for path in Path(bot.domain.__file__).parent.rglob("*.py"):
        source = path.read_text()
        assert "from .." not in source, f"{path} imports outside the domain"


def test_the_use_cases_depend_on_ports_not_on_adapters():
    import bot.services

    adapters = FORBIDDEN | {"bot.store", "bot.llm", "bot.slack", "bot.app", "bot.config"}
    for path in Path(bot.services.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        relative = {("bot." + node.module.lstrip(".")) if node.level == 2 else "bot.services"
                    for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level and node.module}
        adapter_modules = tuple(adapters - FORBIDDEN)
        offenders = (imported_roots(path) & FORBIDDEN) | {m for m in relative if m.startswith(adapter_modules)}
        assert offenders == set(), f"{path.name} imports {offenders}"


def test_no_port_has_more_than_twelve_methods():
    import inspect
    from typing import Protocol

    import bot.services.ports as ports

    def methods(protocol: type) -> set[str]:  # its own and those it inherits from other protocols
        return {name for klass in protocol.__mro__ if klass not in (Protocol, object)
                for name, f in vars(klass).items() if callable(f) and not name.startswith("_")}

    modules = [module for _, module in inspect.getmembers(ports, inspect.ismodule)]
    protocols = {cls for module in modules for cls in vars(module).values()
                 if inspect.isclass(cls) and getattr(cls, "_is_protocol", False) and cls is not Protocol}
    assert len(protocols) >= 20
    assert {p.__name__: len(methods(p)) for p in protocols if len(methods(p)) > 12} == {}


THREAD_MAKERS = {"ThreadPoolExecutor", "DrainableExecutor", "Thread", "Timer", "BackgroundScheduler"}


def made_at_import(tree: ast.AST) -> list[str]:
    """Calls that make a thread, a pool or a scheduler outside any function: they would run at import."""
    found, todo = [], list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # runs when called, by whoever owns what it makes
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in THREAD_MAKERS:
                found.append(f"{name}( at line {node.lineno}")
        todo.extend(ast.iter_child_nodes(node))
    return found


def test_the_rule_sees_a_pool_made_at_import_and_not_one_made_in_a_function():
    assert made_at_import(ast.parse("import threading\nCALLS = ThreadPoolExecutor(max_workers=8)\n"
                                    "class A:\n    T = threading.Timer(1, print)\n"
                                    "if True:\n    threading.Thread(target=print).start()\n")) == [
        "Thread( at line 6", "Timer( at line 4", "ThreadPoolExecutor( at line 2"]
    assert made_at_import(ast.parse("def build():\n    return ThreadPoolExecutor(), threading.Thread()\n"
                                    "class B:\n    def start(self):\n        threading.Timer(1, print)\n")) == []


def test_no_module_makes_a_thread_pool_timer_or_thread_at_import():
    """Each is made by the composition root (bot/app.py build, bot/entrypoints/runtime.py start) and stopped by runtime.stop."""
    import bot

    files = list(Path(bot.__file__).parent.rglob("*.py"))
    assert len(files) > 50
    offenders = {str(f): made_at_import(ast.parse(f.read_text())) for f in files}
    assert {f: calls for f, calls in offenders.items() if calls} == {}


def test_the_use_cases_make_no_thread_pool_timer_or_thread_at_all():
    """A use case that needs a delay or a thread is given one (a port) by the composition root, which owns it."""
    import bot.services

    makers = {}
    for path in Path(bot.services.__file__).parent.rglob("*.py"):
        calls = [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)]
        names = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "") for c in calls}
        if names & THREAD_MAKERS:
            makers[path.name] = names & THREAD_MAKERS
    assert makers == {}


def test_there_is_one_composition_root_and_no_service_takes_the_whole_store():
    """bot/app.py makes every service, giving each only the store's ports its constructor names."""
    import bot.services

    assert not (Path(bot.services.__file__).parent / "facade.py").exists()
    offenders = []
    for path in Path(bot.services.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                arguments = node.args.args + node.args.kwonlyargs
                offenders += [f"{path.name}: {a.arg}" for a in arguments
                              if a.annotation is not None and ast.unparse(a.annotation).split(" | ")[0] == "Store"]
    assert offenders == []


def test_no_module_of_the_bot_is_longer_than_400_lines():
    import bot

    long = {str(f): n for f in Path(bot.__file__).parent.rglob("*.py")
            if (n := len(f.read_text().splitlines())) > 400 and "migrations" not in f.parts}
    assert long == {}


def test_transactions_begin_only_in_the_unit_of_work():
    """The store's repositories load and save on the unit of work's connection; only store/work.py begins one
    (a use case opens it: `with work():`)."""
    import bot

    begins = sorted(str(f.relative_to(Path(bot.__file__).parent)) for f in Path(bot.__file__).parent.rglob("*.py")
                    if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "begin"
                           for node in ast.walk(ast.parse(f.read_text()))))
    assert begins == ["store/work.py"]
