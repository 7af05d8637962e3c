"""it.wikipedia's {{Bio}} gives a biography its first sentence; a quotation before the text is an epigraph."""
from corpora.wikitext.parse import parse_wikitext

# Calls as it.wikipedia's articles write them (Adrien-Marie Legendre, Carlo Collodi, Anna Maria
# Pierangeli, Caligola; shortened), with what the page shows.
LEGENDRE = """{{Bio
|Nome = Adrien-Marie
|Cognome = Legendre
|Sesso = M
|LuogoNascita = Parigi
|GiornoMeseNascita = 18 settembre
|AnnoNascita = 1752
|LuogoMorte = Parigi
|GiornoMeseMorte = 10 gennaio
|AnnoMorte = 1833
|Epoca = 1700
|Attività = matematico
|Nazionalità = francese
|Immagine = Legendre.jpg
}}
Il suo nome è inciso sulla [[Torre Eiffel]]."""


def test_bio_writes_the_sentence_that_defines_the_person():
    page = parse_wikitext(LEGENDRE, "it")
    assert page.text == ("Adrien-Marie Legendre (Parigi, 18 settembre 1752 – Parigi, 10 gennaio 1833) è stato un "
                         "matematico francese.\nIl suo nome è inciso sulla Torre Eiffel.")
    assert page.bold_names == ("Adrien-Marie Legendre",)  # what the query masks
    assert [a.target for a in page.anchors] == ["Parigi", "Parigi", "Torre Eiffel"]


def test_other_names_article_gender_and_the_parts_that_replace_the_sentence():
    collodi = parse_wikitext("{{Bio|Nome=Carlo|Cognome=Collodi|PostCognomeVirgola=all'anagrafe '''Carlo Lorenzini'''"
                             "|Sesso=M|LuogoNascita=Firenze|LuogoNascitaLink=Firenze|GiornoMeseNascita=24 novembre"
                             "|AnnoNascita=1826|LuogoMorte=Firenze|GiornoMeseMorte=26 ottobre|AnnoMorte=1890"
                             "|Attività=scrittore|Attività2=giornalista|Nazionalità=italiano}}", "it")
    assert collodi.text == ("Carlo Collodi, all'anagrafe Carlo Lorenzini (Firenze, 24 novembre 1826 – Firenze, 26 ottobre "
                            "1890) è stato uno scrittore e giornalista italiano.")
    assert collodi.bold_names == ("Carlo Collodi", "Carlo Lorenzini")
    alive = parse_wikitext("{{Bio|Nome=Anna Maria|Cognome=Pierangeli|Sesso=F|LuogoNascita=Cagliari|GiornoMeseNascita="
                           "19 giugno|AnnoNascita=1932|Attività=attrice|Attività2=economista|Nazionalità=italiana"
                           "|PostNazionalità=attiva nel cinema}}", "it")
    assert alive.text == "Anna Maria Pierangeli (Cagliari, 19 giugno 1932) è un'attrice ed economista italiana attiva nel cinema."
    caligola = parse_wikitext("{{Bio|Nome=Gaio Giulio Cesare Germanico|Cognome=|PreData=[[lingua latina|latino]]: "
                              "''Gaius Iulius Caesar Germanicus''|Sesso=M|LuogoNascita=Anzio|GiornoMeseNascita=31 agosto"
                              "|AnnoNascita=12|LuogoMorte=Roma|AnnoMorte=41|PreAttività=, noto come '''Caligola''', fu il"
                              " terzo|Attività=imperatore|Nazionalità=romano|PostNazionalità=, della [[dinastia giulio-"
                              "claudia]]}}", "it")
    assert caligola.text == ("Gaio Giulio Cesare Germanico (latino: Gaius Iulius Caesar Germanicus; Anzio, 31 agosto 12 – "
                             "Roma, 41), noto come Caligola, fu il terzo imperatore romano, della dinastia giulio-claudia.")
    pinochet = parse_wikitext("{{Bio|Nome=Augusto|Cognome=Pinochet|Sesso=M|AnnoNascita=1915|AnnoMorte=2006|Attività="
                              "generale|Attività2=politico|AttivitàAltre={{sp}}e [[dittatore]]|Nazionalità=cileno}}", "it")
    assert pinochet.text == "Augusto Pinochet (1915 – 2006) è stato un generale, politico e dittatore cileno."  # not "politicoe"
    fine = parse_wikitext("{{Bio|Nome=Corrado III|Cognome=Hohenstaufen|Sesso=M|AnnoNascita=1093|AnnoMorte=1152"
                          "|Attività=|Nazionalità=|FineIncipit=fu imperatore del [[Sacro Romano Impero]]}}", "it")
    assert fine.text == "Corrado III Hohenstaufen (1093 – 1152) fu imperatore del Sacro Romano Impero."  # its full stop


def test_a_bio_template_elsewhere_or_without_a_name_is_dropped_like_any_other():
    assert parse_wikitext("{{bio|some other wiki's template}}Text here.", "en").text == "Text here."
    assert parse_wikitext("{{Bio|Nome=Ada|Cognome=Lovelace|Attività=matematica}}Text here.", "en").text == "Text here."
    assert parse_wikitext("{{Bio|Sesso=F|Attività=matematica}}Testo.", "it").text == "Testo."


def test_a_quotation_before_the_text_is_an_epigraph_not_the_first_sentence():
    epigraph = "{{quote\n|La rivoluzione è un processo perpetuo.\n|Abbie Hoffman}}\n{{Bio|Nome=Abbot|Cognome=Hoffman|" \
               "Sesso=M|AnnoNascita=1936|AnnoMorte=1989|Attività=attivista|Nazionalità=statunitense}}"
    assert parse_wikitext(epigraph, "it").text == "Abbot Hoffman (1936 – 1989) è stato un attivista statunitense."
    body = "'''Assisi''' è un comune.\n{{quote|Però chi d'esso loco fa parole|Dante}}\nAltro."
    assert parse_wikitext(body, "it").text == "Assisi è un comune.\nPerò chi d'esso loco fa parole\nAltro."
