"""Step 6 on a real repository: levels, every extra request, the budget, the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.config import Config, Limits
from reviewbot.context import build_bundle, build_item
from reviewbot.diff.parse import collect
from reviewbot.repo.git import open_repo
from reviewbot.repo.source import MAX_FILE_BYTES, RepoSource
from reviewbot.rules import run_rules
from reviewbot.schema.findings import Finding
from reviewbot.schema.plans import FusedItem, FusedPlan
from reviewbot.schema.units import ChangeRequest, ExtraRequest, ReviewUnit
from tests.conftest import GitFixture

PAY = '''"""Payments."""
import logging

FEE = 2


def pay(amount):
    logging.info("paying")
    return amount + FEE


def fee():
    """The fee."""
    return FEE


class Invoice:
    def __init__(self, amount):
        self.amount = amount

    def total(self):
        return pay(self.amount)

    def describe(self):
        return f"invoice {self.amount}"
'''
FILES = {
    "src/billing/pay.py": PAY,
    "src/billing/refund.py": "from billing.pay import pay\n\n\ndef refund(amount):\n"
                             "    return pay(-amount)\n",
    "src/shop/checkout.py": "from billing.pay import pay\n\n\ndef checkout(cart):\n"
                            "    total = sum(cart)\n    return pay(total)\n",
    "scripts/batch.py": "from billing.pay import pay\n\n\ndef run_batch(amounts):\n"
                        "    for a in amounts:\n        pay(a)\n",
    "src/shop/cart.py": "class Cart:\n    def total(self):\n        return 0\n",
    "src/shop/client.py": "def connect(config):\n    return config['timeout']\n",
    "src/shop/report.py": "from billing.pay import Invoice\n\n\ndef show(i: Invoice):\n"
                          "    return i.amount\n",
    "config/settings.yaml": "timeout: 30\n",
    "vendor/lib/copy.py": "def other():\n    return pay(1)\n",
    "docs/pay.md": "Call pay(amount) to pay.\n",
}


@pytest.fixture
def shop(repo: GitFixture) -> GitFixture:
    for path, text in FILES.items():
        repo.write(path, text)
    repo.commit("shop")
    return repo


def _change_pay_signature(shop: GitFixture) -> None:
    shop.write("src/billing/pay.py", PAY.replace("def pay(amount):", "def pay(amount, currency):")
               .replace('logging.info("paying")', 'logging.info("paying %s", currency)'))
    shop.stage()


def test_acceptance_pay_signature_change(shop: GitFixture,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _change_pay_signature(shop)
    assert main(["--repo", str(shop.root), "--offline", "--keep-context"]) == 0
    out = capsys.readouterr().out
    run = Path(out.rsplit("artifacts in ", 1)[1].strip())
    [item] = json.loads((run / "step6_context_bundle.json").read_text())["items"]

    callers = {(c["file_path"], c["function"]) for c in item["callers"]}
    assert {("src/billing/refund.py", "refund"), ("src/shop/checkout.py", "checkout"),
            ("scripts/batch.py", "run_batch")} <= callers
    assert not any(c["file_path"].startswith("vendor/") for c in item["callers"])
    checkout = next(c for c in item["callers"] if c["function"] == "checkout")
    assert "return pay(total)" in checkout["snippet"] and checkout["line"] == 6
    assert item["callers"][0]["file_path"].startswith("src/billing/")  # same package first
    assert "def pay(amount):" in item["previous_version"]
    assert "def pay(amount, currency):" in item["function_context"]
    assert item["complete"] is True


def plan_item(unit: ReviewUnit, level: str = "diff_only",
              *requests: ExtraRequest) -> FusedItem:
    return FusedItem.from_data({
        "unit_id": unit.unit_id, "rule_context_level": level, "rule_confidence": 0.5,
        "llm_context_level": level, "final_context_level": level, "extra_requests": requests})


@pytest.fixture
def staged_units(shop: GitFixture) -> tuple[RepoSource, list[ReviewUnit]]:
    _change_pay_signature(shop)
    shop.write("src/billing/pay.py", (shop.root / "src/billing/pay.py").read_text().replace(
        "        self.amount = amount\n",
        "        self.amount = amount\n        self.currency = 'EUR'\n"))
    shop.stage()
    repo = open_repo(shop.root)
    diff = collect(repo, ChangeRequest(mode="staged"))
    units = run_rules(diff.units, RepoSource(repo, diff).rules_text, Config()).units
    return RepoSource(repo, diff), list(units)


def build(source: RepoSource, unit: ReviewUnit, *requests: ExtraRequest,
          level: str = "diff_only", findings: list[Finding] | None = None,
          budget: int = 10_000) -> dict[str, object]:
    return build_item(unit, plan_item(unit, level, *requests), findings or [], source,
                      budget).to_data()


def test_levels(staged_units: tuple[RepoSource, list[ReviewUnit]]) -> None:
    source, (pay_unit, _) = staged_units
    diff_only = build(source, pay_unit)
    assert diff_only["function_context"] is None
    assert "+    7 | def pay(amount, currency):" in str(diff_only["diff"])
    assert "-    7 | def pay(amount):" in str(diff_only["diff"])
    function = build(source, pay_unit, level="function")
    assert str(function["function_context"]).startswith("# pay (src/billing/pay.py)")
    file_level = build(source, pay_unit, level="file_context")
    skeleton = str(file_level["file_context"])
    for line in ("import logging", "FEE = 2", "def pay(amount, currency):", "class Invoice:",
                 "def describe(self):"):
        assert line in skeleton
    assert "return amount + FEE" not in skeleton
    full = build(source, pay_unit, level="full_file")
    assert 'return f"invoice {self.amount}"' in str(full["full_file"])


def test_search_and_config_usage(staged_units: tuple[RepoSource, list[ReviewUnit]]) -> None:
    source, (pay_unit, _) = staged_units
    fee = build(source, pay_unit, ExtraRequest(type="search", keyword="FEE"))
    hits = fee["search_hits"]
    assert isinstance(hits, tuple)
    assert [(h["file_path"], h["line"], h["kind"]) for h in hits] == [
        ("src/billing/pay.py", 4, "definition"), ("src/billing/pay.py", 9, "reference"),
        ("src/billing/pay.py", 14, "reference")]
    usage = build(source, pay_unit, ExtraRequest(type="search_config_usage", keyword="timeout"))
    assert [h["file_path"] for h in usage["search_hits"]] == ["src/shop/client.py"]  # type: ignore[index]


def test_implementations_model_usage_and_class_methods(
        staged_units: tuple[RepoSource, list[ReviewUnit]]) -> None:
    source, (_, invoice_unit) = staged_units
    impls = build(source, invoice_unit,
                  ExtraRequest(type="search_implementations", symbol="total"))
    found = {(h["file_path"], h["function"]) for h in impls["search_hits"]}  # type: ignore[union-attr]
    assert ("src/shop/cart.py", "Cart.total") in found
    usage = build(source, invoice_unit, ExtraRequest(type="search_model_usage", symbol="Invoice"))
    texts = [h["text"] for h in usage["search_hits"]]  # type: ignore[union-attr]
    assert "def show(i: Invoice):" in texts
    methods = build(source, invoice_unit, ExtraRequest(type="search_class_methods",
                                                       symbol="Invoice"))
    assert methods["class_methods"] == ("L22: def total(self):", "L25: def describe(self):")


def test_scanner_issues_and_previous_version_of_a_deletion(
        shop: GitFixture) -> None:
    shop.git("rm", "-q", "src/billing/refund.py")
    repo = open_repo(shop.root)
    diff = collect(repo, ChangeRequest(mode="staged"))
    [unit] = diff.units
    finding = Finding(file_path=unit.file_path, start_line=1, end_line=1, severity="warning",
                      category="bug", rule_id="x.rule", title="Title", message="Message.",
                      unit_id=unit.unit_id)
    item = build(RepoSource(repo, diff), unit, ExtraRequest(type="previous_version"),
                 ExtraRequest(type="scanner_issues"), level="function", findings=[finding])
    assert item["scanner_issues"] == ("L1-L1 warning x.rule: Title. Message.",)
    assert "def refund(amount):" in str(item["previous_version"])
    assert "# refund (src/billing/refund.py, before)" in str(item["function_context"])


def test_budget_drops_least_valuable_first_and_says_so(
        staged_units: tuple[RepoSource, list[ReviewUnit]]) -> None:
    source, (pay_unit, _) = staged_units
    requests = (ExtraRequest(type="search_callers", symbol="pay"),
                ExtraRequest(type="previous_version"), ExtraRequest(type="search", keyword="pay"))
    roomy = build(source, pay_unit, *requests, level="full_file")
    tight = build(source, pay_unit, *requests, level="full_file", budget=300)
    assert roomy["complete"] is True and roomy["clipped"] == ()
    assert tight["complete"] is False
    dropped = [c.split(" (")[0] for c in tight["clipped"]]  # type: ignore[union-attr]
    assert dropped[:3] == ["dropped search_hits", "dropped full_file", "dropped file_context"]
    assert tight["diff"] and int(str(tight["tokens"])) <= 300


def test_run_budget_and_stats(staged_units: tuple[RepoSource, list[ReviewUnit]]) -> None:
    source, units = staged_units
    plan = FusedPlan(plan=tuple(plan_item(u, "full_file") for u in units))
    roomy = build_bundle(plan, units, [], source, Config())
    tight = build_bundle(plan, units, [], source, Config(limits=Limits(context_run_tokens=200)))
    assert (roomy.stats.units, roomy.stats.full_context_units) == (2, 2)
    assert tight.stats.full_context_units < 2 and tight.stats.tokens <= roomy.stats.tokens


def test_secrets_are_redacted_everywhere(shop: GitFixture) -> None:
    key = "AKIAQWERTYUIOPASDFGH"
    shop.write("src/billing/pay.py", PAY.replace("FEE = 2", f'FEE = 2\nKEY = "{key}"'))
    shop.stage()
    repo = open_repo(shop.root)
    diff = collect(repo, ChangeRequest(mode="staged"))
    rules = run_rules(diff.units, RepoSource(repo, diff).rules_text, Config())
    from reviewbot.rules.secrets import secret_values
    from reviewbot.text.redaction import Redactor
    plan = FusedPlan(plan=tuple(plan_item(u, "full_file", ExtraRequest(type="search",
                                                                        keyword="KEY"))
                                for u in rules.units))
    bundle = build_bundle(plan, rules.units, rules.findings, RepoSource(repo, diff), Config(),
                          Redactor(secret_values(rules.units, rules.findings)))
    text = bundle.to_json()
    assert key not in text and "[REDACTED]" in text


def test_sandbox_refuses_escaping_symlinks_and_summarises_big_or_binary_files(
        shop: GitFixture, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret outside the repository\n")
    (shop.root / "escape.txt").symlink_to(outside)
    shop.write("big.txt", "x" * (MAX_FILE_BYTES + 1))
    shop.write("blob.bin", b"\x00\x01\x02")
    repo = open_repo(shop.root)
    diff = collect(repo, ChangeRequest(mode="working", include_untracked=True))
    source = RepoSource(repo, diff)
    # A symlink reads as git stores it, its target's name, never what it points at.
    assert source.new_text("escape.txt") == str(outside)
    assert source.new_text("../outside.txt") is None
    assert "over the" in (source.new_text("big.txt") or "")
    assert "binary file" in (source.new_text("blob.bin") or "")


CALLER_FILES = {
    "src/billing/pay.py": PAY,
    # Many call sites: more than any snippet budget, all of them locations.
    **{f"src/jobs/job{n}.py": f"from billing.pay import pay\n\n\ndef job{n}(x):\n"
                              f"    return pay(x + {n})\n" for n in range(12)},
    "tests/test_pay.py": "from billing.pay import pay\n\n\ndef test_pay():\n"
                         "    assert pay(1) == 3\n",
    "src/shop/alias.py": "from billing.pay import pay as charge\n\n\ndef buy(x):\n"
                         "    return charge(x)\n",
    "src/shop/method.py": "def settle(account):\n    return account.pay(5)\n",
    "src/shop/mentions.py": '"""Call pay(amount) to pay."""\n# pay(1) is an example\n'
                            "def doc():\n    '''>>> pay(2)'''\n    return 1\n",
    "README.md": "Use pay(amount).\n",
}


@pytest.fixture
def many_callers(repo: GitFixture) -> tuple[RepoSource, ReviewUnit]:
    for path, text in CALLER_FILES.items():
        repo.write(path, text)
    repo.commit("many callers")
    repo.write("src/billing/pay.py", PAY.replace("def pay(amount):", "def pay(amount, fee=FEE):"))
    repo.stage()
    git_repo = open_repo(repo.root)
    diff = collect(git_repo, ChangeRequest(mode="staged"))
    [unit] = run_rules(diff.units, RepoSource(git_repo, diff).rules_text, Config()).units
    return RepoSource(git_repo, diff), unit


def test_every_call_site_is_a_location_and_the_nearest_have_code(
        many_callers: tuple[RepoSource, ReviewUnit]) -> None:
    source, unit = many_callers
    item = build(source, unit, ExtraRequest(type="search_callers", symbol="pay"))
    sites = [(c["file_path"], c["line"]) for c in item["callers"]]  # type: ignore[union-attr]
    jobs = [(f"src/jobs/job{n}.py", 5) for n in range(12)]
    assert set(jobs) <= set(sites)
    assert ("src/billing/pay.py", 22) in sites  # Invoice.total calls pay
    assert ("src/shop/alias.py", 5) in sites and ("src/shop/method.py", 2) in sites
    assert sites[-1] == ("tests/test_pay.py", 5)  # tests after the sources
    assert not any(path in ("src/shop/mentions.py", "README.md") for path, _ in sites)
    with_code = [c for c in item["callers"] if c["snippet"]]  # type: ignore[union-attr]
    assert len(with_code) == 5 and with_code[0]["file_path"] == "src/billing/pay.py"
    # Certain calls (files that import pay) before a method call that may be another pay.
    assert sites.index(("src/shop/alias.py", 5)) < sites.index(("src/shop/method.py", 2))


def test_a_tight_budget_keeps_call_sites_and_drops_their_code_first(
        many_callers: tuple[RepoSource, ReviewUnit]) -> None:
    source, unit = many_callers
    tight = build(source, unit, ExtraRequest(type="search_callers", symbol="pay"),
                  level="function", budget=330)
    callers = tight["callers"]
    assert len(callers) == 16 and not any(c["snippet"] for c in callers)  # type: ignore
    clipped = " ".join(tight["clipped"])  # type: ignore[arg-type]
    assert "dropped the code of 16 call sites" in clipped
    assert "dropped function_context" in clipped and "lines of 16 call sites" not in clipped


def test_removing_a_function_asks_for_its_callers(repo: GitFixture) -> None:
    repo.write("src/billing/pay.py", PAY)
    repo.commit("pay")
    repo.write("src/billing/pay.py", PAY.replace('def fee():\n    """The fee."""\n'
                                                 "    return FEE\n\n\n", ""))
    repo.stage()
    git_repo = open_repo(repo.root)
    diff = collect(git_repo, ChangeRequest(mode="staged"))
    [unit] = run_rules(diff.units, RepoSource(git_repo, diff).rules_text, Config()).units
    assert [(r.type, r.symbol) for r in unit.rule_extra_requests
            if r.type == "search_callers"] == [("search_callers", "fee")]
    assert any(r.type == "previous_version" for r in unit.rule_extra_requests)


def test_the_functions_around_a_large_new_file_are_found_in_linear_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each line was compared with every function found before it: 20,000 lines took 10 s.
    Counted, not timed: comparisons stay a small multiple of the lines."""
    from reviewbot.code.syntax import Span, SyntaxIndex
    from reviewbot.context import _enclosing_spans

    text = "".join(f"def f{n}(x):\n    y = x + {n}\n    return y\n\n\n" for n in range(3000))
    lines = text.count("\n")
    compared = 0
    real = Span.contains

    def counting(self: Span, line: int) -> bool:
        nonlocal compared
        compared += 1
        return real(self, line)

    monkeypatch.setattr(Span, "contains", counting)
    found = _enclosing_spans(SyntaxIndex(text, "python"), list(range(1, lines + 1)))
    assert [s.name for s in found[:2]] == ["f0", "f1"] and len(found) == 3000
    assert compared < 3 * lines


def test_an_offline_run_builds_no_bundle_unless_asked(
        shop: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing reads a bundle offline (a third of a large hook's time went there); a rerun
    with a model builds it from the repository."""
    _change_pay_signature(shop)
    assert main(["--repo", str(shop.root), "--offline"]) == 0
    run = Path(capsys.readouterr().out.rsplit("artifacts in ", 1)[1].strip())
    bundle = json.loads((run / "step6_context_bundle.json").read_text())
    assert bundle["items"] == [] and bundle["not_built"].startswith("offline")
    review = json.loads((run / "step7_review.json").read_text())
    assert set(review["skipped"].values()) == {"offline"}
    assert main(["rerun", str(run), "--from", "review", "--offline"]) == 0
    out, err = capsys.readouterr()
    assert "kept no context bundle (an offline run): it is built again" in err
    rebuilt = Path(out.rsplit("artifacts in ", 1)[1].strip())
    assert json.loads((rebuilt / "step6_context_bundle.json").read_text())["items"]
