"""Inline <math> formulas become the text a reader sees; what plain text cannot show is dropped."""
import pytest

from corpora.wikitext.tex_text import MAX_CHARS, tex_to_text
from corpora.wikitext.parse import parse_wikitext


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
        (r"i^2=-1", "i^2 = -1"),  # relations spaced as TeX spaces them, a sign not
        (r"\mathbb{H}", "ℍ"),
        (r"\Z", "ℤ"),
        (r"v_d = \mu E", "v_d = μE"),  # a space after a command only ends it, as in TeX
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
        # what a review of the 1,193 rendered formulas of the real dumps found wrong or odd:
        (r"A = \frac{1}{2}ap", "A = (1/2)ap"),  # bn: a factor after a fraction
        (r"\frac{1}{2}\ln\left(2\pi\right)", "(1/2) ln(2π)"),  # it (Stirling)
        (r"s^2=\textstyle\frac{1}{n-1}\sum(y_i-\bar{y})^2", "s^2 = (1/(n-1))∑(y_i-ȳ)^2"),  # en
        (r"\frac{a}{b}^2", "(a/b)^2"),
        (r"\frac{1}{2} + x", "1/2 + x"),
        (r"\sqrt{2\pi}", "√(2π)"),  # it, en: not √2·π
        (r"\sqrt{ab} = \sqrt{a}\sqrt{b}", "√(ab) = √a√b"),  # bn
        (r"\mu_0\mathbf{J}", "μ_0 J"),  # bn: a script ends before the next factor
        (r"c^2\Delta t^2", "c^2 Δt^2"),  # el
        (r"\{a^nb^n:n\ge 1\}", "{a^n b^n:n ≥ 1}"),  # ja
        (r"\bar{ \bar \alpha}", "ᾱ\u0304"),  # en: two bars, not three
        (r"\dot{\vec{\beta}}", "β\u20d7\u0307"),  # it
        (r"a\text{cov}(X,Y)", "acov(X,Y)"),
        (r"\sin^{-1}\alpha", "sin^-1 α"),
        (r"\sin x\cos y", "sin x cos y"),
        (r"g\circ f", "g ∘ f"),  # el: operators spaced on both sides
        (r"\xi\in (a,b)", "ξ ∈ (a,b)"),
        (r"10^{3n}", "10^(3n)"),  # uk
        (r"F_{i_j}", "F_(i_j)"),  # it
        (r"T_{m,n,k}", "T_(m,n,k)"),  # en
        (r"F^{\alpha \beta}", "F^αβ"),  # it
        (r"\left. f \right|_0^1", "f ∣_0^1"),
        (r"\operatorname*{argmax}_x f", "argmax_x f"),
        (r"90^\circ", "90°"),
        (r"{n \choose k}", "C(n, k)"),
        (r"{a+b \over 2}", "(a+b)/2"),
        (r"\stackrel{\text{def}}{=}", "="),
        (r"\iint_S", "∬_S"),
    ],
)
def test_simple_formulas_read_as_text(tex, text):
    assert tex_to_text(tex) == text


@pytest.mark.parametrize(
    "tex",
    [r"\begin{pmatrix}a & b\end{pmatrix}", r"a \\ b", "{" * 5000 + "x" + "}" * 5000, r"x & y", r"\unknowncommand{x}", r"x^", "}", "{x", "",
     r"\sqrt[5]{x}", "x" * (MAX_CHARS + 1)],
)
def test_what_plain_text_cannot_show_is_none(tex):
    assert tex_to_text(tex) is None


def test_a_tie_at_an_edge_keeps_a_formula_apart_from_a_word():
    # en "…with fixed number of photons, <math>~n~</math>photon state"; before punctuation it is nothing
    assert parse_wikitext("the<math>~n~</math>photon state", "en").text == "the n photon state"
    assert parse_wikitext("requires that <math>~f = 0~</math>; so", "en").text == "requires that f = 0; so"


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
        "The laws:\n* <math>E = mc^2</math>\n* <math>F = ma</math>\nhold.",  # a list of formulas
        'The law <math display="block">E = mc^2</math> holds.',
        "The law <math>\\begin{align}a &= b\\end{align}</math> holds.",
    ],
)
def test_display_and_unrenderable_formulas_are_dropped(wikitext):
    assert "mc" not in parse_wikitext(wikitext, "en").text and "align" not in parse_wikitext(wikitext, "en").text
