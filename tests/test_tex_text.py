"""Inline <math> formulas become the text a reader sees; what plain text cannot show is dropped."""
import pytest

from corpora.tex_text import MAX_CHARS, tex_to_text
from corpora.wikitext import parse_wikitext


@pytest.mark.parametrize(
    "tex, text",
    [
        # formulas of the real excerpts (en, el, ja, vi)
        (r"\bar{x}", "x̄"),
        (r"x_i-\bar{x}", "x_i-x̄"),
        (r"E = mc^2", "E = mc^2"),
        (r"10^{-6}", "10^-6"),
        (r"\nu_{\mu}", "ν_μ"),
        (r" \varsigma ", "ς"),
        (r"L_1 \cap L_2", "L_1 ∩ L_2"),
        (r"\tfrac{2}{3}", "2/3"),
        (r"\mathbb{H}", "ℍ"),
        (r"\Z", "ℤ"),
        (r"v_d = \mu E", "v_d = μ E"),
        # brackets where an operand has more than one term
        (r"x^{n+1}", "x^(n+1)"),
        (r"\frac{n+1}{2}", "(n+1)/2"),
        (r"\sqrt[3]{x+1}", "∛(x+1)"),
        (r"\sum_{i=1}^n x_i", "∑_(i=1)^n x_i"),
        # functions, fonts, spacing
        (r"\sin(x) + \cos\theta", "sin(x) + cos θ"),
        (r"\mathcal{O}(n \log n)", "O(n log n)"),
        (r"\text{km}^2", "km^2"),
        (r"f'(x)", "f′(x)"),
        (r"a\,b", "a b"),
        (r"\{x \mid x > 0\}", "{x ∣ x > 0}"),
    ],
)
def test_simple_formulas_read_as_text(tex, text):
    assert tex_to_text(tex) == text


@pytest.mark.parametrize(
    "tex",
    [r"\begin{pmatrix}a & b\end{pmatrix}", r"a \\ b", r"x & y", r"\unknowncommand{x}", r"x^", "}", "{x", "",
     r"\sqrt[5]{x}", "x" * (MAX_CHARS + 1)],
)
def test_what_plain_text_cannot_show_is_none(tex):
    assert tex_to_text(tex) is None


def test_inline_formulas_stay_in_their_sentence():
    page = parse_wikitext("The mean <math>\\bar{x}</math> of [[sample]]s, with <math>n \\ge 2</math>.", "en")
    assert page.text == "The mean x̄ of samples, with n ≥ 2."
    assert [page.text[a.start:a.end] for a in page.anchors] == ["samples"]
    # the formula's characters are not markup ("|" is the divides sign: a line with a pipe is residue)
    assert parse_wikitext("So <math>|x| = f''(a)</math> holds.", "en").text == "So ∣x∣ = f′′(a) holds."


@pytest.mark.parametrize(
    "wikitext",
    [
        "The law:\n:<math>E = mc^2</math>\nholds.",  # indented display formula
        "The law:\n<math>E = mc^2</math>.\nholds.",  # a line of its own
        'The law <math display="block">E = mc^2</math> holds.',
        "The law <math>\\begin{align}a &= b\\end{align}</math> holds.",
    ],
)
def test_display_and_unrenderable_formulas_are_dropped(wikitext):
    assert "mc" not in parse_wikitext(wikitext, "en").text and "align" not in parse_wikitext(wikitext, "en").text
