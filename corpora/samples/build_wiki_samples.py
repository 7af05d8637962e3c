"""Builds the bundled sample dumps in corpora/samples/wiki/ from the hand-written wikitext below.

    python -m corpora.samples.build_wiki_samples          # rewrite the files, print the mention counts
    python -m corpora.samples.build_wiki_samples --check  # only print the counts

`python -m pipelines.wiki_mrc` with no input runs on these files, so they must look like real dumps
(MediaWiki export schema 0.10: siteinfo, localised namespaces, one revision per page) and carry the
wikitext features the parser has to handle: infoboxes, <ref>{{cite web}}</ref>, wikitables, files
with linked captions, categories, interlanguage links, bold names in the lead, piped and unpiped links,
link trails, #section links, redirects (local magic words and the <redirect/> element), a
disambiguation page and a talk page. Each dump also holds the damage the reader and the job must
survive: a malformed page, a page that is not UTF-8, an empty page, a self-link, links to missing
pages and a redirect loop.

The job keeps entities with at least 10 mentions in en and 5 elsewhere (docs/design.md §2, stage 4);
mentions are links in prose (links inside templates, tables, refs and file captions are dropped). The
themes are chosen so that a few entities per language clear that bar: `--check` counts them.

Output is deterministic (fixed page order, fixed timestamps, bz2 is deterministic), so rebuilding
gives the same bytes and the tests can check that the committed files match this script.
"""
from __future__ import annotations

import argparse
import bz2
import hashlib
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from corpora.dumps.multistream import write_multistream

OUT_DIR = Path(__file__).resolve().parent / "wiki"
LANGS = ("en", "zh", "th", "ar", "hi")
MIN_MENTIONS = {"en": 10}  # the job's defaults; every other language: 5
MIN_MENTIONS_OTHER = 5
MULTISTREAM_PAGES_PER_STREAM = 4
TIMESTAMP = "2024-01-15T12:00:00Z"
SCHEMA = "http://www.mediawiki.org/xml/export-0.10/"


@dataclass(frozen=True)
class Page:
    title: str
    text: str
    ns: int = 0
    redirect: str | None = None  # target of a redirect page (written as <redirect title=.../>)
    damage: str | None = None  # "malformed_title" | "encoding:<codec>" | "broken_utf8" (see _page_xml)
    comment: str = "sample page"


@dataclass(frozen=True)
class Site:
    lang: str
    sitename: str
    main_page: str
    first_page_id: int
    namespaces: tuple[tuple[int, str], ...]
    pages: tuple[Page, ...]


def redirect(title: str, target: str, magic: str = "#REDIRECT", note: str = "") -> Page:
    text = f"{magic} [[{target}]]" + (f"\n\n{note}" if note else "")
    return Page(title, text, redirect=target, comment="redirect")


# ───────────────────────────────────── en ─────────────────────────────────────
# Portugal. Entities meant to clear the en threshold of 10: Portugal, Lisbon, Tagus.

EN_PAGES = (
    Page("Portugal", """{{Short description|Country in southwestern Europe}}
{{Use dmy dates|date=January 2024}}
{{Infobox country
| conventional_long_name = Portuguese Republic
| common_name = Portugal
| capital = [[Lisbon]]
| largest_city = capital
| official_languages = [[Portuguese language|Portuguese]]
| area_km2 = 92,212
| population_census = 10,343,066
| population_census_year = 2021
| currency = [[Euro]] (€)
}}
'''Portugal''', officially the '''Portuguese Republic''' ({{lang-pt|República Portuguesa}}), is a country on the [[Iberian Peninsula]] in southwestern [[Europe]]. It borders [[Spain]] to the north and east and the [[Atlantic Ocean]] to the west and south, and includes the archipelagos of the [[Azores]] and [[Madeira]]. Its capital and largest city is [[Lisbon]], on the estuary of the [[Tagus]]; the second city is [[Porto]], at the mouth of the [[Douro]].<ref name="ine">{{cite web |title=Censos 2021 |url=https://censos.ine.pt/ |publisher=Statistics Portugal |access-date=15 January 2024}}</ref>

[[File:Flag of Portugal.svg|thumb|upright|The flag of [[Portugal]], adopted in 1911]]

== History ==
The territory was part of the Roman province of [[Lusitania]]. The kingdom was founded in the 12th century, when [[Afonso I of Portugal|Afonso Henriques]] took the title of king, and its borders have changed little since the 13th century. In the [[Age of Discovery]] Portuguese navigators such as [[Vasco da Gama]] opened the sea route to India, and the country built an empire in Africa, Asia and South America. [[Lisbon]] was largely destroyed by the [[1755 Lisbon earthquake]]. The monarchy fell in 1910, and the [[Estado Novo (Portugal)|Estado Novo]] dictatorship ended with the [[Carnation Revolution]] of 1974. Portugal joined the [[European Economic Community]] in 1986.<ref name="ine" />

== Geography ==
The main rivers, the [[Tagus]], the [[Douro]], the [[Mondego]] and the [[Guadiana]], rise in Spain or in the central mountains and flow west to the Atlantic. North of the [[Tagus]] the country is hilly; to the south lie the plains of the [[Alentejo]].

{| class="wikitable"
|+ Largest cities (2021 census, rounded)
! City !! Region !! Population
|-
| [[Lisbon]] || Lisbon || 545,000
|-
| [[Porto]] || Norte || 232,000
|-
| [[Coimbra]] || Centro || 141,000
|}

== Culture ==
The national language is [[Portuguese language|Portuguese]]. [[Luís de Camões]] wrote the national epic, ''[[Os Lusíadas]]'', and [[Fernando Pessoa]] is the best-known poet of the 20th century. [[Fado]] is the best-known music of the country, and [[Port wine]] from the [[Douro]] valley its best-known wine.

== References ==
{{Reflist}}

{{Authority control}}

[[Category:Portugal| ]]
[[Category:Countries in Europe]]
[[Category:Member states of the European Union]]

[[pt:Portugal]]
[[fr:Portugal]]"""),
    redirect("Portuguese Republic", "Portugal", note="{{R from long name}}"),
    Page("Lisbon", """{{Infobox settlement
| name = Lisbon
| native_name = Lisboa
| settlement_type = [[Capital city]]
| subdivision_type = Country
| subdivision_name = [[Portugal]]
| population_total = 545,923
| population_as_of = 2021
}}
'''Lisbon''' ({{lang-pt|'''Lisboa'''}}) is the capital and largest city of [[Portugal]]. It lies on the north bank of the [[Tagus]] estuary, where the river meets the [[Atlantic Ocean]], and is one of the oldest cities in Western Europe.<ref>{{cite web |title=Lisbon |url=https://www.lisboa.pt/ |publisher=Câmara Municipal de Lisboa |access-date=15 January 2024}}</ref>

== History ==
{{Main|History of Lisbon}}
The city was held by the [[Moors]] until 1147, when it was taken by [[Afonso I of Portugal|Afonso Henriques]] after the [[Siege of Lisbon]], and it replaced [[Coimbra]] as the capital in 1255. It was later the seat of the old [[Estremadura Province]]. In the 15th and 16th centuries the fleets of the [[Age of Discovery]] sailed from the [[Tagus]], among them that of [[Vasco da Gama]]. The [[1755 Lisbon earthquake]] and the fire and tsunami that followed destroyed much of the city; the [[Pombaline Lower Town|Baixa]] was rebuilt on a grid plan. The [[Carnation Revolution]] began in Lisbon on 25 April 1974.

== Landmarks ==
The [[Belém Tower]] and the [[Jerónimos Monastery]] stand in the western district of Belém. Two bridges cross the river: the [[25 de Abril Bridge]] and the [[Vasco da Gama Bridge]]. [[Fado]] is sung in the [[tavern]]s of the old quarters of Alfama and Mouraria.

[[File:Lisbon panorama.jpg|thumb|left|[[Lisbon]] seen from the [[Tagus]]]]

== References ==
<references />

[[Category:Lisbon| ]]
[[Category:Capitals in Europe]]
[[Category:Port cities and towns in Portugal]]

[[pt:Lisboa]]
[[es:Lisboa]]"""),
    redirect("Lisboa", "Lisbon", note="{{R from alternative language|pt}}"),
    Page("Porto", """{{Infobox settlement
| name = Porto
| other_name = Oporto
| subdivision_name = [[Portugal]]
}}
'''Porto''' ({{IPA-pt|ˈpoɾtu|pt}}), also known in English as '''Oporto''', is the second-largest city in [[Portugal]], after [[Lisbon]]. It stands on the north bank of the [[Douro]], near the river's mouth on the Atlantic coast. The Roman settlement of Portus Cale gave its name to the country, and [[Porto]] gave its own to [[Port wine]], which is aged in the cellars of [[Vila Nova de Gaia]] across the river. The historic centre of Porto was declared a [[World Heritage Site]] in 1996.

== Economy ==
Porto is the centre of the industrial north of the country. Its port, at Leixões, is one of the largest in Portugal, and the city is served by [[Francisco Sá Carneiro Airport]].

[[Category:Porto| ]]
[[Category:Cities in Portugal]]
[[pt:Porto]]"""),
    redirect("Oporto", "Porto", note="{{R from alternative name}}"),
    Page("Tagus", """{{Infobox river
| name = Tagus
| native_name = Tajo, Tejo
| countries = [[Spain]], [[Portugal]]
| length = {{convert|1007|km}}
| mouth = [[Atlantic Ocean]] at [[Lisbon]]
}}
The '''Tagus''' ({{lang-es|Tajo}}; {{lang-pt|Tejo}}) is the longest river of the [[Iberian Peninsula]]. It rises in the Sierra de Albarracín in [[Spain]], flows west for {{convert|1007|km}} past [[Toledo, Spain|Toledo]], forms part of the border between Spain and [[Portugal]], and empties into the Atlantic Ocean at [[Lisbon]]. Its estuary, the Mar da Palha, is one of the largest wetlands in Europe.<ref>{{cite web |title=Reserva Natural do Estuário do Tejo |url=https://www.icnf.pt/ |publisher=ICNF |access-date=15 January 2024}}</ref>

== Course ==
In Portugal the river flows through the plains of the Ribatejo before it widens into the estuary. At [[Lisboa|the capital]] it is crossed by the [[25 de Abril Bridge]] and the [[Vasco da Gama Bridge]]. North of it the [[Douro]] and the [[Mondego]] run to the Atlantic in parallel valleys.

== References ==
{{Reflist}}

[[Category:Rivers of Portugal]]
[[Category:Rivers of Spain]]
[[Category:International rivers of Europe]]
[[pt:Rio Tejo]]"""),
    redirect("Tejo", "Tagus", note="{{R from alternative language|pt}}"),
    redirect("River Tagus", "Tagus", magic="#redirect"),
    Page("Douro", """{{Infobox river
| name = Douro
| native_name = Duero
| length = {{convert|897|km}}
| mouth = [[Atlantic Ocean]] at [[Porto]]
}}
The '''Douro''' ({{lang-es|Duero}}) is one of the major rivers of the [[Iberian Peninsula]]. It rises near Duruelo de la Sierra in [[Spain]], crosses the northern Meseta and reaches the Atlantic at [[Porto]]. With a length of {{convert|897|km}} it is the third-longest river of the peninsula, after the [[Tagus]] and the [[Ebro]]. For about {{convert|112|km}} it forms the border between Spain and [[Portugal]].

The terraced vineyards of the Alto Douro, where the grapes for [[Port wine]] are grown, were declared a World Heritage Site in 2001. Flat-bottomed ''[[rabelo boat|rabelos]]'' once carried the wine barrels downstream to [[Porto|the city]].

[[Category:Rivers of Portugal]]
[[Category:Rivers of Spain]]
[[pt:Rio Douro]]"""),
    Page("Coimbra", """'''Coimbra''' is a city in central [[Portugal]], on the [[Mondego]] river. It was the capital of the kingdom from 1131 until 1255, when the court moved to [[Lisbon]]. The city is best known for the [[University of Coimbra]], whose buildings on the hill of Alcáçova dominate the old town, and for its own tradition of [[Fado|fado]], sung by students in black capes.

[[Category:Coimbra| ]]
[[Category:Cities in Portugal]]
[[pt:Coimbra]]"""),
    Page("University of Coimbra", """{{Infobox university
| name = University of Coimbra
| native_name = Universidade de Coimbra
| established = 1290
| city = [[Coimbra]]
| country = [[Portugal]]
}}
The '''University of Coimbra''' ({{lang-pt|Universidade de Coimbra}}) is a public university in [[Coimbra]], [[Portugal]]. It was founded in [[Lisbon]] in 1290 by King [[Denis of Portugal|Denis]], moved several times between [[Lisbon|the capital]] and Coimbra, and settled in Coimbra for good in 1537. After the proclamation of the [[Portuguese Republic]] in 1910 its faculties were reorganised. Its baroque Joanina Library was built in the 18th century, and teaching is in [[Portuguese language|Portuguese]]. The university was declared a World Heritage Site in 2013.

[[Category:University of Coimbra| ]]
[[Category:Universities in Portugal]]
[[pt:Universidade de Coimbra]]"""),
    Page("Luís de Camões", """{{Infobox writer
| name = Luís de Camões
| birth_date = c. 1524
| death_date = 10 June 1580
| notableworks = ''[[Os Lusíadas]]''
}}
'''Luís Vaz de Camões''' (c. 1524 – 10 June 1580), known in English as '''Camoens''', is regarded as the greatest poet of the [[Portuguese language]]. His epic poem ''[[Os Lusíadas]]'' (1572) celebrates the voyage of [[Vasco da Gama]] to India. Camões was probably born in [[Lisbon]]; he served as a soldier in North Africa, where he lost an eye, and spent many years in the East. In the first canto he invokes the Tágides, the nymphs of the [[Tagus]]. He died in Lisbon, and 10 June, the day of his death, is [[Portugal Day|the national day]] of [[Portugal]].

{{DEFAULTSORT:Camoes, Luis de}}
[[Category:1580 deaths]]
[[Category:Portuguese poets]]
[[pt:Luís de Camões]]"""),
    redirect("Camoens", "Luís de Camões", note="{{R from alternative spelling}}"),
    Page("Fernando Pessoa", """'''Fernando António Nogueira Pessoa''' (13 June 1888 – 30 November 1935) was a [[Portugal|Portuguese]] poet, writer and translator, born in [[Lisbon]]. He spent his childhood in [[Durban]] and wrote in [[Portuguese language|Portuguese]], English and French, under many heteronyms, among them Alberto Caeiro, Ricardo Reis and Álvaro de Campos. A poem of Caeiro's says that the [[River Tagus|Tagus]] is not more beautiful than the river that flows through his village, because it is not the river of his village. His only Portuguese book published in his lifetime was ''Mensagem'' (1934).

{{DEFAULTSORT:Pessoa, Fernando}}
[[Category:1935 deaths]]
[[Category:Portuguese poets]]
[[pt:Fernando Pessoa]]"""),
    Page("Vasco da Gama", """{{Infobox person
| name = Vasco da Gama
| birth_date = c. 1469
| death_date = 24 December 1524
| known_for = First voyage from Europe to India by sea
}}
'''Vasco da Gama''' (c. 1469 – 24 December 1524) was a [[Portugal|Portuguese]] explorer, the first European to reach India by sea. His fleet of four ships left [[Lisbon]] from the beach of Restelo, on the [[Tagus]], on 8 July 1497, rounded the [[Cape of Good Hope]] and reached [[Kozhikode|Calicut]] in May 1498. The voyage is the subject of ''[[Os Lusíadas]]'' by [[Luís de Camões]]. He is buried in the [[Jerónimos Monastery]], and the [[Vasco da Gama Bridge]] is named after him.

[[Category:Portuguese explorers]]
[[Category:1524 deaths]]
[[pt:Vasco da Gama]]"""),
    Page("1755 Lisbon earthquake", """The '''1755 Lisbon earthquake''', also known as the '''Great Lisbon earthquake''', struck [[Portugal]] on the morning of 1 November 1755, [[All Saints' Day]]. With the fires and the [[tsunami]] that followed it, it almost totally destroyed [[Lisbon]] and the surrounding area; estimates of the dead in the city range from 12,000 to 50,000. The waves rushed up the [[Tagus]] and flooded the lower town. The [[Marquis of Pombal]] directed the rebuilding (see the [[Lisbon#History|history of Lisbon]]). The disaster influenced European thinkers such as [[Voltaire]], who wrote the ''Poem on the Lisbon Disaster''.<ref>{{cite journal |last=Chester |first=David K. |title=The 1755 Lisbon earthquake |journal=Progress in Physical Geography |volume=25 |issue=3 |year=2001 |pages=363–383}}</ref>

== References ==
{{Reflist}}

[[Category:1755 earthquakes]]
[[Category:History of Lisbon]]
[[pt:Sismo de Lisboa de 1755]]"""),
    redirect("Great Lisbon earthquake", "1755 Lisbon earthquake"),
    Page("Alfama <old town>", """'''Alfama''' is the oldest district of [[Lisbon]].""", damage="malformed_title"),
    Page("Belém Tower", """{{Infobox historic site
| name = Belém Tower
| native_name = Torre de Belém
| built = 1514–1519
}}
'''Belém Tower''' ({{lang-pt|Torre de Belém}}), officially the Tower of Saint Vincent, is a fortified tower in the Belém district of [[Lisbon]], [[Portugal]]. Built between 1514 and 1519 on a small island near the north bank of the [[Tagus]], it guarded the entrance to the harbour and was the starting point of many voyages of the [[Age of Discovery]]. It is a World Heritage Site together with the nearby [[Jerónimos Monastery]], where [[Vasco da Gama]] is buried.

[[Category:Towers in Lisbon]]
[[Category:World Heritage Sites in Portugal]]
[[pt:Torre de Belém]]"""),
    Page("Belém", """'''Belém''' (Portuguese for ''Bethlehem'') may refer to:
* [[Belém (Lisbon)|Belém]], a district of [[Lisbon]], Portugal
* [[Belém Tower]], a fortified tower in that district
* [[Belém, Pará]], a city in Brazil

{{disambiguation}}"""),
    Page("Portuguese language", """{{Infobox language
| name = Portuguese
| nativename = português
| speakers = 250 million
| familycolor = Indo-European
}}
'''Portuguese''' ({{lang|pt|português}}) is a [[Romance languages|Romance language]] that developed from the [[Vulgar Latin|Latin]] spoken in the northwest of the [[Iberian Peninsula]]. It is the official language of [[Portugal]], [[Brazil]], [[Angola]], [[Mozambique]] and five other countries, and has about 250 million native speakers. The European standard is based on the speech of [[Lisbon]] and [[Coimbra]]. Its great classic is ''Os Lusíadas'' by [[Luís de Camões]]; other writers include [[Fernando Pessoa]] and [[José Saramago]], and it is taught at the [[University of Coimbra]] since the Middle Ages. Outside Europe, [[Portugal|Portuguese]] settlers took it to every continent.

[[Category:Portuguese language| ]]
[[Category:Romance languages]]
[[pt:Língua portuguesa]]"""),
    Page("Pastéis de Belém", """'''Pastéis de Belém''' is a bakery in [[Lisbon]] famous for its custard tarts.""", damage="encoding:cp1252"),
    Page("Fado", """'''Fado''' is a music genre of [[Portugal]] that can be traced to the 1820s in [[Lisbon]]. It is known for mournful tunes and lyrics, often about the sea or the life of the poor, and for the feeling of ''[[saudade]]''. Fado is sung in the taverns and restaurants of the old quarters of [[Lisboa]], accompanied by the [[Portuguese guitar]]. A separate tradition exists in [[Coimbra]], sung by students of the [[University of Coimbra|university]]. The best-known singer, [[Amália Rodrigues]], was called the Queen of Fado. Fado was inscribed on the UNESCO list of [[Intangible Cultural Heritage]] in 2011.

[[File:Amalia Rodrigues.jpg|thumb|[[Amália Rodrigues]] in 1969]]

[[Category:Fado| ]]
[[Category:Portuguese music]]
[[pt:Fado]]"""),
    Page("Sintra", ""),
    Page("Carnation Revolution", """{{Infobox civil conflict
| title = Carnation Revolution
| date = 25 April 1974
| place = [[Lisbon]], [[Portugal]]
}}
The '''Carnation Revolution''' ({{lang-pt|Revolução dos Cravos}}), also known as the '''25 April''', was a military coup in [[Lisbon]] on 25 April 1974 that overthrew the [[Estado Novo (Portugal)|Estado Novo]] regime. It was led by the Armed Forces Movement, whose officers used two songs played on the radio, "E Depois do Adeus" and "[[Grândola, Vila Morena]]", as signals. A frigate anchored in the [[Tagus]] was ordered to fire on the rebels and did not. Almost no shots were fired, and people put carnations into the soldiers' rifles. The coup led [[Portugal|the country]] to democracy and its African colonies to independence, and the bridge over the river at Lisbon was renamed the [[25 de Abril Bridge]].

[[Category:1974 in Portugal]]
[[Category:20th-century revolutions]]
[[pt:Revolução dos Cravos]]"""),
    Page("Port wine", """'''Port wine''' ({{lang-pt|vinho do Porto}}), or simply '''port''', is a fortified wine from the [[Douro]] valley in northern [[Portugal]]. It is named after [[Oporto]], from where it was shipped; the wine is aged in oak [[barrel]]s in the lodges of Vila Nova de Gaia, opposite the city on the south bank of the river. Brandy is added during fermentation, which leaves the wine sweet and strong. The Douro region was demarcated in 1756, one of the oldest protected wine regions in the world; most of its wine was once sold in [[Lisbon]] and exported to England.

[[Category:Portuguese wine]]
[[Category:Fortified wine]]
[[pt:Vinho do Porto]]"""),
    Page("25 de Abril Bridge", """{{Infobox bridge
| bridge_name = 25 de Abril Bridge
| carries = A2 motorway, Fertagus railway
| crosses = [[Tagus]]
| locale = [[Lisbon]] – [[Almada]]
| mainspan = {{convert|1013|m}}
| open = 6 August 1966
}}
The '''25 de Abril Bridge''' ({{lang-pt|Ponte 25 de Abril}}) is a suspension bridge over the [[River Tagus]] that connects [[Lisbon]] with the municipality of [[Almada]] on the south bank. It was opened on 6 August 1966 as the Salazar Bridge and renamed after the [[Carnation Revolution]]. Its main span is {{convert|1013|m}} long, and it is often compared with the [[Golden Gate Bridge]]. A railway deck was added below the road in 1999. It is one of the symbols of [[Portugal]].

[[Category:Bridges in Lisbon]]
[[Category:Suspension bridges]]
[[pt:Ponte 25 de Abril]]"""),
    Page("Vasco da Gama Bridge", """{{Infobox bridge
| bridge_name = Vasco da Gama Bridge
| crosses = [[Tagus]]
| open = 29 March 1998
}}
The '''Vasco da Gama Bridge''' ({{lang-pt|Ponte Vasco da Gama}}) is a cable-stayed bridge flanked by viaducts that spans the [[Tagus]] near [[Parque das Nações]] in [[Lisbon]]. At {{convert|12.3|km}} it is the longest bridge in the [[European Union]]. It was opened on 29 March 1998, in time for [[Expo '98]], five hundred years after [[Vasco da Gama]] reached India, and it connects the capital of [[Portugal]] with Montijo and Alcochete on the south bank of the river. See also [https://www.lusoponte.pt/ Lusoponte], its operator.

[[Category:Bridges in Lisbon]]
[[Category:Cable-stayed bridges]]
[[pt:Ponte Vasco da Gama]]"""),
    # A redirect loop: each names the other (the job must not follow it forever).
    redirect("Estremadura Province", "Portuguese Estremadura"),
    redirect("Portuguese Estremadura", "Estremadura Province"),
    Page("Talk:Lisbon", """== Population figure ==
The infobox still showed the 2011 census figure; I have updated it to the 2021 census and added the source. [[User:Tágide|Tágide]] ([[User talk:Tágide|talk]]) 10:02, 12 January 2024 (UTC)
:Thanks, looks good. Should the [[Tagus]] estuary photo go to the Geography section? [[User:Alfacinha|Alfacinha]] ([[User talk:Alfacinha|talk]]) 18:40, 13 January 2024 (UTC)""",
         ns=1, comment="/* Population figure */ new section"),
)

# ───────────────────────────────────── zh ─────────────────────────────────────
# 四川. Entities meant to clear the threshold of 5: 四川省, 成都市, 长江, 岷江.

ZH_PAGES = (
    Page("四川省", """{{Infobox China province
| name = 四川省
| capital = [[成都市]]
| area = 486,000
| population = 83,674,866
}}
'''四川省'''，简称'''川'''或'''蜀'''，是[[中华人民共和国]]西南部的一个省，省会为[[成都市]]。四川位于[[长江]]上游，东部是[[四川盆地]]，西部是青藏高原的东缘。<ref>{{cite web|title=四川省情|url=https://www.sc.gov.cn/|publisher=四川省人民政府|accessdate=2024-01-15}}</ref>

== 历史 ==
古代四川有巴国和蜀国。[[三星堆遗址]]出土的青铜器表明，早在三千多年前[[成都平原]]就有发达的文明。战国时秦国蜀郡太守[[李冰]]主持修建了[[都江堰]]，使[[成都市|成都]]平原成为“天府之国”。

== 地理 ==
[[长江]]上游在四川境内称为金沙江，[[岷江]]、嘉陵江、沱江等支流自北向南汇入[[长江|大江]]。西部有[[峨眉山]]、贡嘎山等高山。

{| class="wikitable"
|+ 主要城市（2020年人口，约数）
! 城市 !! 人口
|-
| [[成都市]] || 2094万
|-
| [[绵阳市]] || 487万
|-
| [[乐山市]] || 316万
|}

== 文化 ==
[[川菜]]是中国八大菜系之一。唐代诗人[[李白]]在四川长大，[[杜甫]]曾在成都居住。[[大熊猫]]主要分布在四川的山区。

== 参考文献 ==
{{reflist}}

[[Category:四川省| ]]
[[Category:中华人民共和国省份]]
[[en:Sichuan]]
[[fr:Sichuan]]"""),
    redirect("四川", "四川省", magic="#重定向"),
    Page("成都市", """{{Infobox settlement
| name = 成都市
| nickname = 蓉城、锦官城
| subdivision_name = [[四川省]]
}}
'''成都市'''，简称'''蓉'''，别称'''蓉城'''、'''锦官城'''，是[[四川省]]的省会，位于[[成都平原]]中部，[[岷江]]从城市西北流过。成都是中国西南地区重要的经济、文化和交通中心。

成都建城已有两千多年历史，三国时是[[蜀汉]]的都城。唐代诗人[[杜甫]]流寓成都，在浣花溪畔建草堂居住，即今天的[[杜甫草堂]]。市区北郊的成都大熊猫繁育研究基地饲养着许多[[大熊猫]]。[[成都市]]也是[[川菜]]的中心，火锅和麻婆豆腐闻名全国。[[四川大学]]的主校区位于市区南部的望江。成都平原上的河流最终都汇入[[长江]]。

[[File:Chengdu skyline.jpg|thumb|[[成都市|成都]]市区]]

[[Category:成都市| ]]
[[Category:四川省地级市]]
[[en:Chengdu]]"""),
    redirect("成都", "成都市"),
    Page("长江", """{{Infobox river
| name = 长江
| length = 6,300
| mouth = [[东海]]
}}
'''长江'''，古称'''江'''，下游一段旧称'''扬子江'''，是亚洲最长、世界第三长的河流，全长约6300公里。长江发源于青藏高原的各拉丹冬峰，流经青海、西藏、[[四川省]]、云南、重庆、湖北等省区市，在上海注入[[东海]]。

长江在四川境内的上游段称为金沙江，至宜宾与[[岷江]]汇合后始称长江。四川盆地的大部分河流都属于长江水系。[[三峡]]位于重庆与湖北之间。

[[Category:长江| ]]
[[Category:中国河流]]
[[en:Yangtze]]"""),
    redirect("扬子江", "长江", magic="#重定向"),
    Page("岷江", """'''岷江'''是[[长江]]上游的一条重要支流，位于[[四川省]]中部，全长约735公里。岷江发源于岷山南麓，向南流经都江堰市，在[[都江堰]]分为内外二江，灌溉[[成都平原]]，再在乐山与大渡河、青衣江汇合（[[乐山大佛]]即坐落于此），最后在宜宾汇入[[长江]]。[[成都市|成都]]的府河、南河都源自岷江。

[[Category:长江水系]]
[[en:Min River (Sichuan)]]"""),
    Page("都江堰", """'''都江堰'''是位于[[四川省]][[成都市]]都江堰市境内[[岷江]]上的大型水利工程，由战国时期秦国蜀郡太守[[李冰]]父子主持修建，约建于公元前256年。它由鱼嘴、飞沙堰和宝瓶口三部分组成，两千多年来一直发挥着防洪和灌溉作用，使成都平原成为“[[天府之国]]”。2000年，都江堰与[[青城山]]一起被列为世界文化遗产。

[[Category:中国水利工程]]
[[Category:世界遗产]]
[[en:Dujiangyan]]"""),
    Page("四川大学", """{{Infobox university
| name = 四川大学
| established = 1896年
| city = [[成都市]]
}}
'''四川大学'''，简称'''川大'''，是位于[[四川省]][[成都市]]的一所综合性全国重点大学，其前身是1896年创办的四川中西学堂。学校有望江、华西和江安三个校区，望江校区位于锦江之畔，是中国西部规模最大的大学之一。

[[Category:四川大学| ]]
[[Category:成都高等院校]]
[[en:Sichuan University]]"""),
    redirect("川大", "四川大学"),
    Page("麻婆豆腐 <川菜>", """'''麻婆豆腐'''是[[川菜]]的代表菜之一。""", damage="malformed_title"),
    Page("杜甫", """'''杜甫'''（712年－770年），字'''子美'''，号少陵野老，是唐代伟大的现实主义诗人，被后人称为“诗圣”，与[[李白]]合称“李杜”。安史之乱后，杜甫于759年末到达[[成都市|成都]]，在友人帮助下于浣花溪畔修建草堂，在此写下《茅屋为秋风所破歌》等二百四十多首诗。765年，他离开成都，沿[[岷江]]和[[扬子江|长江]]东下，此后漂泊于夔州、湖南一带，770年死于湘江舟中。

[[Category:唐朝诗人]]
[[en:Du Fu]]"""),
    Page("杜甫草堂", """'''杜甫草堂'''位于[[成都市]]西郊浣花溪畔，是唐代诗人[[杜甫]]流寓成都时的故居。现存建筑多为明清时期重建，1961年被列为全国重点文物保护单位，现为成都杜甫草堂博物馆，是[[四川省]]重要的文化名胜。

[[Category:成都文物]]
[[en:Du Fu Thatched Cottage]]"""),
    Page("大熊猫", """'''大熊猫'''（学名：''Ailuropoda melanoleuca''）是中国特有的熊科动物，主要栖息在[[四川]]、陕西和甘肃的山区竹林中，以竹子为主食，被视为中国的国宝。[[成都]]大熊猫繁育研究基地和卧龙国家级自然保护区都在四川。四川大熊猫栖息地于2006年被列入世界自然遗产。

[[File:Giant Panda in Chengdu.jpg|thumb|[[成都市|成都]]的大熊猫]]
[[Category:熊科]]
[[en:Giant panda]]"""),
    Page("火锅", """'''火锅'''是[[四川省]]和重庆的传统吃法。""", damage="encoding:gbk"),
    Page("峨眉山", """'''峨眉山'''位于[[四川省]]乐山市峨眉山市境内，是中国四大佛教名山之一，最高峰万佛顶海拔3,099米。1996年，峨眉山与[[乐山大佛]]一起被列入世界文化与自然双重遗产。

[[Category:四川山峰]]
[[en:Mount Emei]]"""),
    Page("乐山大佛", """'''乐山大佛'''，又名'''凌云大佛'''，位于[[四川省]]乐山市，地处[[岷江]]、大渡河和青衣江三江汇流处，是唐代开凿的一尊弥勒佛坐像，通高71米，是世界上最大的石刻坐佛。大佛始凿于713年，完成于803年。[[峨眉山]]在它的西边。

[[Category:四川佛教]]
[[en:Leshan Giant Buddha]]"""),
    Page("九寨沟", ""),
    Page("川菜", """'''川菜'''即'''四川菜'''，是中国八大菜系之一，发源于[[四川]]，以[[成都市|成都]]和重庆两地的菜肴为代表。川菜以麻、辣、鲜、香著称，常用花椒和辣椒调味，著名菜肴有麻婆豆腐、宫保鸡丁、回锅肉和[[火锅]]等。

[[Category:中国菜系]]
[[en:Sichuan cuisine]]"""),
    Page("三星堆遗址", """'''三星堆遗址'''位于[[四川省]]广汉市，距[[成都市|成都]]约40公里，是古蜀国的都城遗址，年代距今约4800年至2800年。1986年发现的两个祭祀坑出土了青铜纵目面具、青铜神树等大量珍贵文物。三星堆的发现证明[[长江]]上游地区与黄河流域一样，是中华文明的发源地之一。

[[Category:四川考古遗址]]
[[en:Sanxingdui]]"""),
    Page("李白", """'''李白'''（701年－762年），字'''太白'''，号青莲居士，唐代著名浪漫主义诗人，被后人誉为“诗仙”。他幼年随父迁居绵州昌隆县（今[[四川省]]江油市）青莲乡，在蜀地度过了青少年时代。二十多岁时，他“仗剑去国，辞亲远游”，乘船沿[[长江]]东下，离开蜀地。名作《蜀道难》描写了入蜀道路的艰险，《峨眉山月歌》写的是[[峨眉山]]和平羌江（今青衣江）。他与[[杜甫]]是好友。

[[Category:唐朝诗人]]
[[en:Li Bai]]"""),
    Page("峨眉", """'''峨眉'''可以指：
* [[峨眉山]]，位于[[四川省]]的佛教名山
* [[峨眉山市]]，四川省乐山市代管的县级市
* [[峨眉派]]，中国武术门派之一

{{disambig}}"""),
    redirect("天府之国", "天府", magic="#重定向"),
    redirect("天府", "天府之国", magic="#重定向"),
    Page("Talk:成都市", """== 人口数据 ==
第七次全国人口普查的数据已经更新到信息框。[[User:锦官城|锦官城]]（[[User talk:锦官城|留言]]） 2024年1月12日 (五) 10:02 (UTC)
:谢谢，来源也可以补上。[[User:蓉城人|蓉城人]]（[[User talk:蓉城人|留言]]） 2024年1月13日 (六) 08:15 (UTC)""",
         ns=1, comment="/* 人口数据 */ 新段落"),
)

# ───────────────────────────────────── th ─────────────────────────────────────
# ประเทศไทย. Entities meant to clear the threshold of 5: ประเทศไทย, กรุงเทพมหานคร, แม่น้ำเจ้าพระยา.

TH_PAGES = (
    Page("ประเทศไทย", """{{กล่องข้อมูล ประเทศ
| ชื่อท้องถิ่น = ราชอาณาจักรไทย
| เมืองหลวง = [[กรุงเทพมหานคร]]
| ภาษาทางการ = [[ภาษาไทย]]
}}
'''ประเทศไทย''' หรือชื่อทางการว่า '''ราชอาณาจักรไทย''' เป็นรัฐชาติที่ตั้งอยู่ในภูมิภาคเอเชียตะวันออกเฉียงใต้ มีเมืองหลวงและเมืองใหญ่ที่สุดคือ[[กรุงเทพมหานคร]] ทิศเหนือติดต่อกับประเทศพม่าและประเทศลาว ทิศตะวันออกติดต่อกับประเทศลาวและประเทศกัมพูชา โดยมี[[แม่น้ำโขง]]กั้นพรมแดนกับลาวเป็นส่วนใหญ่<ref>{{cite web|title=ข้อมูลประเทศไทย|url=https://www.thaigov.go.th/|publisher=สำนักเลขาธิการนายกรัฐมนตรี|accessdate=2024-01-15}}</ref>

== ประวัติศาสตร์ ==
ก่อน พ.ศ. 2482 ประเทศไทยมีชื่อว่า [[สยาม]] [[อาณาจักรอยุธยา]]เจริญรุ่งเรืองอยู่ริม[[แม่น้ำเจ้าพระยา]]นานกว่า 400 ปี จนเสียกรุงแก่พม่าใน พ.ศ. 2310 ต่อมาพระบาทสมเด็จพระพุทธยอดฟ้าจุฬาโลกมหาราชทรงสถาปนา[[กรุงเทพมหานคร|กรุงเทพฯ]]เป็นราชธานีใน พ.ศ. 2325

== ภูมิศาสตร์ ==
ภาคกลางเป็นที่ราบลุ่มของ[[แม่น้ำเจ้าพระยา]] ซึ่งเกิดจาก[[แม่น้ำปิง]] วัง ยม และน่าน ภาคเหนือเป็นเทือกเขาสูง มีเมืองสำคัญคือ[[จังหวัดเชียงใหม่|เชียงใหม่]]

{| class="wikitable"
! จังหวัด !! ภาค
|-
| [[กรุงเทพมหานคร]] || ภาคกลาง
|-
| [[จังหวัดเชียงใหม่]] || ภาคเหนือ
|}

== อ้างอิง ==
{{รายการอ้างอิง}}

[[หมวดหมู่:ประเทศไทย| ]]
[[หมวดหมู่:ประเทศในทวีปเอเชีย]]
[[en:Thailand]]"""),
    redirect("สยาม", "ประเทศไทย", magic="#เปลี่ยนทาง"),
    Page("กรุงเทพมหานคร", """{{กล่องข้อมูล เมือง
| ชื่อ = กรุงเทพมหานคร
| ประเทศ = [[ประเทศไทย]]
}}
'''กรุงเทพมหานคร''' เป็นเมืองหลวงและนครที่มีประชากรมากที่สุดของ[[ประเทศไทย]] ตั้งอยู่บนสองฝั่งของ[[แม่น้ำเจ้าพระยา]]ใกล้อ่าวไทย ชาวต่างชาติมักเรียกเมืองนี้ว่า [[บางกอก]] กรุงเทพมหานครได้รับการสถาปนาเป็นราชธานีใน พ.ศ. 2325 โดยมี[[พระบรมมหาราชวัง]]และ[[วัดพระศรีรัตนศาสดาราม]]เป็นศูนย์กลางของ[[เกาะรัตนโกสินทร์]] ฝั่งตรงข้ามของแม่น้ำคือ[[วัดอรุณราชวราราม]] มหาวิทยาลัยแห่งแรกของประเทศคือ[[จุฬาลงกรณ์มหาวิทยาลัย]]ก็ตั้งอยู่ในกรุงเทพมหานคร

[[ไฟล์:Bangkok skyline.jpg|thumb|ทิวทัศน์[[กรุงเทพมหานคร]]ริม[[แม่น้ำเจ้าพระยา]]]]

[[หมวดหมู่:กรุงเทพมหานคร| ]]
[[หมวดหมู่:เมืองหลวงในทวีปเอเชีย]]
[[en:Bangkok]]"""),
    redirect("กรุงเทพฯ", "กรุงเทพมหานคร", magic="#เปลี่ยนทาง"),
    redirect("บางกอก", "กรุงเทพมหานคร"),
    Page("แม่น้ำเจ้าพระยา", """'''แม่น้ำเจ้าพระยา''' เป็นแม่น้ำสายหลักของ[[ประเทศไทย]] เกิดจากการบรรจบกันของ[[แม่น้ำปิง]]และแม่น้ำน่านที่จังหวัดนครสวรรค์ ไหลลงใต้ผ่านที่ราบภาคกลาง ผ่าน[[อาณาจักรอยุธยา|พระนครศรีอยุธยา]]และ[[กรุงเทพมหานคร]] แล้วไหลลงสู่อ่าวไทยที่จังหวัดสมุทรปราการ มีความยาวประมาณ 372 กิโลเมตร

[[หมวดหมู่:แม่น้ำในประเทศไทย]]
[[en:Chao Phraya River]]"""),
    redirect("เจ้าพระยา (แม่น้ำ)", "แม่น้ำเจ้าพระยา", magic="#เปลี่ยนทาง"),
    Page("จังหวัดเชียงใหม่", """'''เชียงใหม่''' เป็นจังหวัดใหญ่ในภาคเหนือของ[[ประเทศไทย]] ตัวเมืองเชียงใหม่ตั้งอยู่ริม[[แม่น้ำปิง]] พญามังรายทรงสร้างเมืองนี้ขึ้นใน พ.ศ. 1839 เป็นราชธานีของอาณาจักรล้านนา ปัจจุบันเชียงใหม่เป็นศูนย์กลางทางเศรษฐกิจและวัฒนธรรมของภาคเหนือ อยู่ห่างจาก[[กรุงเทพมหานคร]]ประมาณ 700 กิโลเมตร

[[หมวดหมู่:จังหวัดเชียงใหม่| ]]
[[en:Chiang Mai Province]]"""),
    Page("อาณาจักรอยุธยา", """'''อาณาจักรอยุธยา''' เป็นอาณาจักรของชาวสยามที่ดำรงอยู่ระหว่าง พ.ศ. 1893 ถึง พ.ศ. 2310 และเป็นต้นกำเนิดของ[[ประเทศไทย]]ในปัจจุบัน ราชธานีคือกรุงศรีอยุธยา ตั้งอยู่บนเกาะที่มีแม่น้ำสามสายล้อมรอบ ได้แก่[[แม่น้ำเจ้าพระยา]] แม่น้ำป่าสัก และแม่น้ำลพบุรี กรุงศรีอยุธยาเป็นเมืองท่าค้าขายที่สำคัญของเอเชีย จนถูกกองทัพพม่าทำลายใน พ.ศ. 2310 ปัจจุบันนครประวัติศาสตร์พระนครศรีอยุธยาเป็นมรดกโลก อยู่ห่างจาก[[กรุงเทพมหานคร]]ไปทางเหนือประมาณ 80 กิโลเมตร

[[หมวดหมู่:อาณาจักรอยุธยา| ]]
[[en:Ayutthaya Kingdom]]"""),
    Page("ผัดไทย <สูตร>", """'''ผัดไทย''' เป็นอาหารจานเดียวของ[[ประเทศไทย]]""", damage="malformed_title"),
    Page("จุฬาลงกรณ์มหาวิทยาลัย", """{{กล่องข้อมูล มหาวิทยาลัย
| ชื่อ = จุฬาลงกรณ์มหาวิทยาลัย
| ที่ตั้ง = [[กรุงเทพมหานคร]]
}}
'''จุฬาลงกรณ์มหาวิทยาลัย''' เป็นมหาวิทยาลัยแห่งแรกของ[[ประเทศไทย]] ก่อตั้งเมื่อวันที่ 26 มีนาคม พ.ศ. 2459 โดยพระบาทสมเด็จพระมงกุฎเกล้าเจ้าอยู่หัว ซึ่งพระราชทานนามตามพระบาทสมเด็จพระจุลจอมเกล้าเจ้าอยู่หัว พระบรมชนกนาถ มหาวิทยาลัยตั้งอยู่ในเขตปทุมวัน ใจกลาง[[กรุงเทพมหานคร]]

[[หมวดหมู่:มหาวิทยาลัยในประเทศไทย]]
[[en:Chulalongkorn University]]"""),
    Page("วัดพระศรีรัตนศาสดาราม", """'''วัดพระศรีรัตนศาสดาราม''' หรือ '''วัดพระแก้ว''' เป็นวัดที่ตั้งอยู่ในเขตพระราชฐานชั้นนอกของ[[พระบรมมหาราชวัง]] [[กรุงเทพมหานคร]] เป็นที่ประดิษฐานพระพุทธมหามณีรัตนปฏิมากร (พระแก้วมรกต) ซึ่งเป็นพระพุทธรูปคู่บ้านคู่เมืองของ[[ประเทศไทย]] สร้างขึ้นพร้อมกับการสถาปนากรุงรัตนโกสินทร์ใน พ.ศ. 2325 ไม่ไกลจากฝั่งตะวันออกของ[[แม่น้ำเจ้าพระยา]]

[[หมวดหมู่:วัดในกรุงเทพมหานคร]]
[[en:Wat Phra Kaew]]"""),
    redirect("วัดพระแก้ว", "วัดพระศรีรัตนศาสดาราม", magic="#เปลี่ยนทาง"),
    Page("พระบรมมหาราชวัง", """'''พระบรมมหาราชวัง''' เป็นพระราชวังหลวงที่ตั้งอยู่ริมฝั่งตะวันออกของ[[แม่น้ำเจ้าพระยา]] ในเขตพระนคร สร้างขึ้นใน พ.ศ. 2325 ในรัชสมัยพระบาทสมเด็จพระพุทธยอดฟ้าจุฬาโลกมหาราช และเป็นที่ประทับของพระมหากษัตริย์จนถึงรัชกาลที่ 5 ภายในมี[[วัดพระแก้ว]] ปัจจุบันเป็นสถานที่ท่องเที่ยวที่มีชื่อเสียงที่สุดแห่งหนึ่งของ[[กรุงเทพฯ]]และของ[[ประเทศไทย]]

[[หมวดหมู่:พระราชวังในประเทศไทย]]
[[en:Grand Palace]]"""),
    Page("ส้มตำ", """'''ส้มตำ''' เป็นอาหารอีสานที่นิยมทั่ว[[ประเทศไทย]]""", damage="encoding:cp874"),
    Page("สุนทรภู่", """'''สุนทรภู่''' (26 มิถุนายน พ.ศ. 2329 – พ.ศ. 2398) เป็นกวีเอกของ[[ประเทศไทย]]สมัยรัตนโกสินทร์ เกิดที่[[กรุงเทพมหานคร|กรุงเทพฯ]] บริเวณริมคลองบางกอกน้อย องค์การยูเนสโกยกย่องให้เป็นบุคคลสำคัญของโลกด้านวรรณกรรมใน พ.ศ. 2529 ผลงานที่มีชื่อเสียงที่สุดคือ ''[[พระอภัยมณี]]'' นอกจากนี้ยังมีนิราศหลายเรื่องที่แต่งระหว่างเดินทางทางเรือไปตาม[[แม่น้ำเจ้าพระยา]] เช่น นิราศภูเขาทอง ซึ่งเล่าการเดินทางจากกรุงเทพฯ ไปยังกรุงเก่า ([[อาณาจักรอยุธยา|อยุธยา]]) งานของท่านเขียนด้วย[[ภาษาไทย]]ที่ไพเราะและเป็นที่จดจำ

[[หมวดหมู่:กวีชาวไทย]]
[[en:Sunthorn Phu]]"""),
    Page("แม่น้ำโขง", """'''แม่น้ำโขง''' เป็นแม่น้ำสายสำคัญของเอเชียตะวันออกเฉียงใต้ ยาวประมาณ 4,900 กิโลเมตร ไหลจากที่ราบสูงทิเบตผ่านจีน พม่า ลาว [[ประเทศไทย]] กัมพูชา และเวียดนาม ก่อนลงสู่ทะเลจีนใต้ แม่น้ำโขงเป็นพรมแดนธรรมชาติระหว่างไทยกับลาวเป็นระยะทางกว่า 800 กิโลเมตร ต่างจาก[[แม่น้ำเจ้าพระยา]]ซึ่งไหลอยู่ภายในประเทศทั้งสาย

[[หมวดหมู่:แม่น้ำในประเทศไทย]]
[[en:Mekong]]"""),
    Page("ภาษาไทย", """'''ภาษาไทย''' เป็นภาษาราชการของ[[ประเทศไทย]] อยู่ในตระกูลภาษาขร้า-ไท และเป็นภาษาที่มีวรรณยุกต์ เขียนด้วยอักษรไทย ซึ่งเชื่อกันว่าพ่อขุนรามคำแหงมหาราชทรงประดิษฐ์ขึ้นใน พ.ศ. 1826 ภาษาไทยมาตรฐานอิงสำเนียงของ[[กรุงเทพมหานคร]] กวีที่มีชื่อเสียงที่สุดคนหนึ่งคือ[[สุนทรภู่]]

[[หมวดหมู่:ภาษาไทย| ]]
[[en:Thai language]]"""),
    Page("ภูเก็ต", ""),
    Page("ต้มยำ", """'''ต้มยำ''' เป็นอาหารประเภทแกงที่มีรสเปรี้ยวและเผ็ด มีต้นกำเนิดใน[[ประเทศไทย]] ปรุงด้วยตะไคร้ ใบมะกรูด ข่า น้ำมะนาว และพริก ต้มยำกุ้งเป็นที่นิยมของชาวภาคกลางที่อาศัยอยู่ริมแม่น้ำ โดยเฉพาะลุ่ม[[แม่น้ำเจ้าพระยา]]ซึ่งมีกุ้งแม่น้ำชุกชุม

[[หมวดหมู่:อาหารไทย]]
[[en:Tom yum]]"""),
    Page("แม่น้ำปิง", """'''แม่น้ำปิง''' เป็นแม่น้ำสายหลักสายหนึ่งของภาคเหนือของ[[ประเทศไทย]] ต้นน้ำอยู่ที่ดอยถ้วย อำเภอเชียงดาว [[จังหวัดเชียงใหม่]] ไหลผ่านตัวเมืองเชียงใหม่ ลำพูน ตาก และกำแพงเพชร แล้วไปบรรจบกับแม่น้ำน่านที่ปากน้ำโพ จังหวัดนครสวรรค์ กลายเป็น[[แม่น้ำเจ้าพระยา]] มีเขื่อนภูมิพลกั้นอยู่ที่จังหวัดตาก

[[หมวดหมู่:แม่น้ำในประเทศไทย]]
[[en:Ping River]]"""),
    Page("วัดอรุณราชวราราม", """'''วัดอรุณราชวราราม''' หรือ '''วัดแจ้ง''' เป็นพระอารามหลวงที่ตั้งอยู่ริมฝั่งตะวันตกของ[[แม่น้ำเจ้าพระยา]] ในเขตบางกอกใหญ่ [[กรุงเทพมหานคร]] ตรงข้ามกับ[[พระบรมมหาราชวัง]] เป็นที่รู้จักจากพระปรางค์สูงราว 80 เมตร ซึ่งประดับด้วยกระเบื้องเคลือบและเปลือกหอย ในสมัยกรุงธนบุรี วัดนี้เคยเป็นที่ประดิษฐานพระแก้วมรกต ก่อนย้ายไปยัง[[วัดพระศรีรัตนศาสดาราม]]

[[ไฟล์:Wat Arun.jpg|thumb|[[วัดอรุณราชวราราม]]ยามเย็น]]
[[หมวดหมู่:วัดในกรุงเทพมหานคร]]
[[en:Wat Arun]]"""),
    Page("เชียงใหม่ (แก้ความกำกวม)", """'''เชียงใหม่''' อาจหมายถึง
* [[จังหวัดเชียงใหม่]] จังหวัดในภาคเหนือของ[[ประเทศไทย]]
* [[อำเภอเมืองเชียงใหม่]] อำเภอที่ตั้งของตัวจังหวัด
* [[มหาวิทยาลัยเชียงใหม่]] มหาวิทยาลัยแห่งแรกในภาคเหนือ

{{แก้ความกำกวม}}"""),
    redirect("กรุงรัตนโกสินทร์", "เกาะรัตนโกสินทร์", magic="#เปลี่ยนทาง"),
    redirect("เกาะรัตนโกสินทร์", "กรุงรัตนโกสินทร์", magic="#เปลี่ยนทาง"),
    Page("พูดคุย:กรุงเทพมหานคร", """== ชื่อเต็มของกรุงเทพมหานคร ==
ควรเพิ่มชื่อเต็มของกรุงเทพมหานครในบทนำหรือไม่ [[ผู้ใช้:ริมน้ำ|ริมน้ำ]] ([[คุยกับผู้ใช้:ริมน้ำ|คุย]]) 10:02, 12 มกราคม 2567 (+07)
:เห็นด้วย แต่ควรใส่ในหัวข้อชื่อเมืองแทน [[ผู้ใช้:เจ้าพระยา|เจ้าพระยา]] ([[คุยกับผู้ใช้:เจ้าพระยา|คุย]]) 08:15, 13 มกราคม 2567 (+07)""",
         ns=1, comment="/* ชื่อเต็มของกรุงเทพมหานคร */ หัวข้อใหม่"),
)

# ───────────────────────────────────── ar ─────────────────────────────────────
# مصر. Entities meant to clear the threshold of 5: مصر, القاهرة, نهر النيل.

AR_PAGES = (
    Page("مصر", """{{صندوق معلومات دولة
| الاسم الرسمي = جمهورية مصر العربية
| العاصمة = [[القاهرة]]
| اللغة الرسمية = [[اللغة العربية]]
}}
'''مصر''' (رسميًا: '''جمهورية مصر العربية''') دولة عربية تقع في الركن الشمالي الشرقي من قارة أفريقيا، ولها امتداد آسيوي في [[شبه جزيرة سيناء]]. عاصمتها وأكبر مدنها [[القاهرة]]، ويجري فيها [[نهر النيل]] من الجنوب إلى الشمال حتى يصب في [[البحر الأبيض المتوسط]]. يتركز معظم السكان في وادي النيل ودلتاه.<ref>{{استشهاد ويب|عنوان=مصر في أرقام|مسار=https://www.capmas.gov.eg/|ناشر=الجهاز المركزي للتعبئة العامة والإحصاء|تاريخ الوصول=2024-01-15}}</ref>

== التاريخ ==
قامت على ضفاف النيل واحدة من أقدم الحضارات في العالم، وبنى المصريون القدماء [[أهرامات الجيزة]] قبل أكثر من 4500 عام. أسس [[الإسكندر الأكبر]] مدينة [[الإسكندرية]] سنة 331 ق.م، ودخل العرب مصر سنة 641م، ثم أسس الفاطميون [[القاهرة]] سنة 969م.

== الجغرافيا ==
معظم أرض مصر صحراء، ولا يزرع إلا وادي النيل والدلتا والواحات. أقيم [[السد العالي]] قرب [[أسوان]] في الجنوب، وتقع آثار طيبة القديمة في [[الأقصر]].

{| class="wikitable"
! المدينة !! المحافظة
|-
| [[القاهرة]] || محافظة القاهرة
|-
| [[الإسكندرية]] || محافظة الإسكندرية
|}

== المراجع ==
{{مراجع}}

[[تصنيف:مصر| ]]
[[تصنيف:دول أفريقيا]]
[[en:Egypt]]"""),
    redirect("جمهورية مصر العربية", "مصر", magic="#تحويل"),
    Page("القاهرة", """{{صندوق معلومات مدينة
| الاسم = القاهرة
| البلد = [[مصر]]
}}
'''القاهرة''' هي عاصمة [[مصر|جمهورية مصر العربية]] وأكبر مدنها، وتقع على ضفتي [[نهر النيل]] جنوب الدلتا. أسسها جوهر الصقلي قائد الخليفة الفاطمي المعز لدين الله سنة 969م، وبني فيها [[جامع الأزهر]] بعد تأسيسها بقليل. تضم منطقة القاهرة الكبرى مدينة الجيزة حيث تقع [[أهرامات الجيزة]] و[[جامعة القاهرة]]. ويضم حي [[حي مصر القديمة|مصر القديمة]] الكنيسة المعلقة. تلقب [[القاهرة]] بمدينة الألف مئذنة.

[[ملف:Cairo skyline.jpg|تصغير|منظر عام لمدينة [[القاهرة]] و[[نهر النيل]]]]

[[تصنيف:القاهرة| ]]
[[تصنيف:عواصم أفريقيا]]
[[en:Cairo]]"""),
    redirect("القاهره", "القاهرة", magic="#تحويل", note="{{تحويلة من خطأ إملائي}}"),
    Page("نهر النيل", """'''نهر النيل''' أطول أنهار العالم، إذ يبلغ طوله نحو 6650 كم. ينبع النيل الأبيض من منطقة البحيرات العظمى في وسط أفريقيا، وينبع النيل الأزرق من هضبة الحبشة، ويلتقي الفرعان عند الخرطوم في السودان، ثم يجري النهر شمالًا عبر [[مصر]] مارًّا بـ[[أسوان]] و[[الأقصر]] و[[القاهرة]]، ويصب في البحر الأبيض المتوسط عبر فرعي رشيد ودمياط. أقيم عليه [[السد العالي]] جنوب أسوان لتنظيم الفيضان.

[[تصنيف:أنهار مصر]]
[[تصنيف:أنهار أفريقيا]]
[[en:Nile]]"""),
    redirect("النيل", "نهر النيل", magic="#تحويل"),
    Page("الإسكندرية", """'''الإسكندرية''' ثاني أكبر مدن [[مصر]] وأكبر موانئها، تقع على ساحل البحر الأبيض المتوسط غرب دلتا [[نهر النيل]]. أسسها [[الإسكندر الأكبر]] سنة 331 ق.م، وكانت عاصمة مصر في العصر البطلمي، واشتهرت بمنارتها وبمكتبتها القديمة. افتتحت [[مكتبة الإسكندرية]] الجديدة سنة 2002. تبعد عن [[القاهرة]] نحو 220 كم.

[[تصنيف:مدن مصر]]
[[en:Alexandria]]"""),
    Page("جامعة القاهرة", """{{صندوق معلومات جامعة
| الاسم = جامعة القاهرة
| تأسست = 1908
}}
'''جامعة القاهرة''' جامعة حكومية مصرية تأسست سنة 1908 باسم الجامعة المصرية، وهي ثاني أقدم مؤسسة للتعليم العالي في [[مصر]] بعد [[جامع الأزهر|الأزهر]]. يقع حرمها الرئيسي في الجيزة على الضفة الغربية لـ[[نهر النيل]] مقابل [[القاهرة]]. من أشهر خريجيها الأديب [[نجيب محفوظ]]، وتولى عمادة كلية الآداب فيها [[طه حسين]].

[[تصنيف:جامعات مصر]]
[[en:Cairo University]]"""),
    Page("كشري <طبق شعبي>", """'''الكشري''' طبق شعبي في [[مصر]].""", damage="malformed_title"),
    Page("جامع الأزهر", """'''جامع الأزهر''' من أشهر المساجد في [[مصر]] والعالم الإسلامي، ويقع في [[القاهرة]] القديمة. بناه جوهر الصقلي بعد تأسيس القاهرة، وأقيمت فيه أول صلاة جمعة سنة 972م. نشأت فيه جامعة الأزهر، وهي من أقدم الجامعات في العالم، ودرس فيه [[طه حسين]] قبل التحاقه بالجامعة المصرية.

[[تصنيف:مساجد القاهرة]]
[[en:Al-Azhar Mosque]]"""),
    Page("أهرامات الجيزة", """'''أهرامات الجيزة''' مجموعة من الأهرامات تقع على هضبة الجيزة قرب [[القاهرة]]، على الضفة الغربية لـ[[نهر النيل]]. أكبرها الهرم الأكبر الذي بناه الملك خوفو نحو سنة 2560 ق.م، وهو الوحيد الباقي من عجائب الدنيا السبع القديمة. بجانبه هرما خفرع ومنقرع وتمثال أبو الهول، وتعد من أشهر معالم [[مصر]].

[[ملف:Giza pyramids.jpg|تصغير|[[أهرامات الجيزة]]]]
[[تصنيف:أهرامات مصر]]
[[en:Giza pyramid complex]]"""),
    Page("فول مدمس", """'''الفول المدمس''' طبق إفطار شائع في [[مصر]].""", damage="encoding:cp1256"),
    Page("نجيب محفوظ", """'''نجيب محفوظ''' (11 ديسمبر 1911 – 30 أغسطس 2006) روائي [[مصر]]ي، وأول أديب عربي يحصل على [[جائزة نوبل في الأدب]] سنة 1988. ولد في حي الجمالية بـ[[القاهرة]]، وتخرج في قسم الفلسفة بـ[[جامعة القاهرة]]. تدور معظم رواياته في أحياء القاهرة القديمة، ومن أشهرها الثلاثية: ''بين القصرين'' و''قصر الشوق'' و''السكرية''.

[[تصنيف:روائيون مصريون]]
[[en:Naguib Mahfouz]]"""),
    Page("أم كلثوم", """'''أم كلثوم''' (نحو 1898 – 3 فبراير 1975) مطربة [[مصر]]ية لقبت بكوكب الشرق. ولدت في قرية طماي الزهايرة بمحافظة الدقهلية في دلتا [[نهر النيل|النيل]]، وانتقلت إلى [[القاهرة]] في عشرينيات القرن العشرين، وكانت حفلاتها الشهرية تذاع على الهواء في أنحاء العالم العربي. من أشهر أغانيها ''أنت عمري'' و''الأطلال''.

[[تصنيف:مغنيات مصريات]]
[[en:Umm Kulthum]]"""),
    Page("طه حسين", """'''طه حسين''' (15 نوفمبر 1889 – 28 أكتوبر 1973) أديب وناقد [[مصر]]ي لقب بعميد الأدب العربي. ولد في محافظة المنيا على ضفاف [[نهر النيل]]، وفقد بصره في طفولته، ودرس في [[جامع الأزهر|الأزهر]] ثم في الجامعة المصرية ([[جامعة القاهرة]] حاليًا)، ونال الدكتوراه من السوربون في باريس. تولى وزارة المعارف سنة 1950، ومن أشهر كتبه ''الأيام''، وهو سيرته الذاتية.

[[تصنيف:أدباء مصريون]]
[[en:Taha Hussein]]"""),
    Page("بورسعيد", ""),
    Page("السد العالي", """'''السد العالي''' سد ركامي ضخم على [[نهر النيل]] جنوب مدينة [[أسوان]] في [[مصر]]. بدأ بناؤه سنة 1960 واكتمل سنة 1970، وكوّن خلفه بحيرة ناصر، إحدى أكبر البحيرات الصناعية في العالم. يحمي السد مصر من فيضانات النيل ويولد كميات كبيرة من الكهرباء، ونقل بسببه معبد أبو سمبل إلى موقع أعلى.

[[تصنيف:سدود مصر]]
[[en:Aswan Dam]]"""),
    redirect("سد أسوان العالي", "السد العالي", magic="#تحويل"),
    Page("أسوان", """'''أسوان''' مدينة في جنوب [[مصر]]، تقع على الضفة الشرقية لـ[[نهر النيل]] عند الشلال الأول، وهي عاصمة محافظة أسوان. بالقرب منها [[السد العالي]] وخزان أسوان القديم ومعبد فيلة، وتبعد عن [[الأقصر]] نحو 210 كم جنوبًا. يقصدها السياح القادمون من [[القاهره]] في الشتاء.

[[تصنيف:مدن مصر]]
[[en:Aswan]]"""),
    Page("الأقصر", """'''الأقصر''' مدينة في صعيد [[مصر]] على ضفتي [[النيل]]، قامت على أنقاض طيبة عاصمة مصر القديمة في عصر الدولة الحديثة. تضم معبد الكرنك ومعبد الأقصر على الضفة الشرقية، ووادي الملوك على الضفة الغربية، ولذلك توصف بأنها أكبر متحف مفتوح في العالم.

[[تصنيف:مدن مصر]]
[[en:Luxor]]"""),
    Page("مكتبة الإسكندرية", """'''مكتبة الإسكندرية''' مكتبة ومركز ثقافي كبير في مدينة [[الإسكندرية]] بـ[[مصر]]، افتتحت سنة 2002 على شاطئ البحر الأبيض المتوسط إحياءً لذكرى مكتبة الإسكندرية القديمة التي كانت أكبر مكتبات العالم القديم.

[[تصنيف:مكتبات مصر]]
[[en:Bibliotheca Alexandrina]]"""),
    Page("الإسكندرية (توضيح)", """'''الإسكندرية''' قد تشير إلى:
* [[الإسكندرية]]، مدينة ساحلية في [[مصر]]
* [[الإسكندرية (فرجينيا)]]، مدينة في الولايات المتحدة
* [[الإسكندرية (لويزيانا)]]، مدينة في الولايات المتحدة

{{توضيح}}"""),
    redirect("مصر القديمة (حي)", "حي مصر القديمة", magic="#تحويل"),
    redirect("حي مصر القديمة", "مصر القديمة (حي)", magic="#تحويل"),
    Page("نقاش:القاهرة", """== عدد السكان ==
أقترح تحديث عدد سكان القاهرة الكبرى وفق آخر تقدير رسمي. [[مستخدم:نيلي|نيلي]] ([[نقاش المستخدم:نيلي|نقاش]]) 10:02، 12 يناير 2024 (ت ع م)
:موافق، مع ذكر المصدر. [[مستخدم:قاهري|قاهري]] ([[نقاش المستخدم:قاهري|نقاش]]) 08:15، 13 يناير 2024 (ت ع م)""",
         ns=1, comment="/* عدد السكان */ قسم جديد"),
)

# ───────────────────────────────────── hi ─────────────────────────────────────
# वाराणसी और गंगा. Entities meant to clear the threshold of 5: वाराणसी, गंगा नदी, उत्तर प्रदेश.

HI_PAGES = (
    Page("भारत", """{{ज्ञानसन्दूक देश
| देश_का_नाम = भारत गणराज्य
| राजधानी = [[नई दिल्ली]]
}}
'''भारत''', आधिकारिक नाम '''भारत गणराज्य''', दक्षिण एशिया में स्थित एक देश है। जनसंख्या की दृष्टि से यह विश्व का सबसे बड़ा देश है। इसकी राजधानी [[नई दिल्ली]] है। उत्तर में [[हिमालय]] पर्वत और दक्षिण में हिन्द महासागर है। [[गंगा नदी|गंगा]], [[यमुना नदी|यमुना]] और ब्रह्मपुत्र यहाँ की प्रमुख नदियाँ हैं।<ref>{{cite web|title=भारत की जनगणना|url=https://censusindia.gov.in/|publisher=भारत सरकार|accessdate=2024-01-15}}</ref>

== इतिहास ==
सिन्धु घाटी सभ्यता भारत की सबसे प्राचीन सभ्यताओं में से है। [[सारनाथ]] में गौतम बुद्ध ने अपना पहला उपदेश दिया था। 15 अगस्त 1947 को भारत स्वतन्त्र हुआ।

== राज्य ==
जनसंख्या के अनुसार सबसे बड़ा राज्य [[उत्तर प्रदेश]] है, जिसकी राजधानी [[लखनऊ]] है।

{| class="wikitable"
! राज्य !! राजधानी
|-
| [[उत्तर प्रदेश]] || [[लखनऊ]]
|-
| [[बिहार]] || [[पटना]]
|}

== सन्दर्भ ==
{{टिप्पणीसूची}}

[[श्रेणी:भारत| ]]
[[श्रेणी:एशिया के देश]]
[[en:India]]"""),
    Page("उत्तर प्रदेश", """'''उत्तर प्रदेश''' जनसंख्या की दृष्टि से [[भारत]] का सबसे बड़ा राज्य है। इसकी राजधानी [[लखनऊ]] है। [[गंगा नदी|गंगा]] और [[यमुना नदी|यमुना]] राज्य के मैदानों से होकर बहती हैं और [[प्रयागराज]] में मिलती हैं। [[वाराणसी]], आगरा, मथुरा और अयोध्या इस राज्य के प्रसिद्ध नगर हैं।

[[श्रेणी:भारत के राज्य]]
[[en:Uttar Pradesh]]"""),
    Page("वाराणसी", """{{ज्ञानसन्दूक भारत के नगर
| नाम = वाराणसी
| राज्य = [[उत्तर प्रदेश]]
}}
'''वाराणसी''', जिसे '''काशी''' और '''बनारस''' भी कहा जाता है, [[उत्तर प्रदेश]] राज्य का एक प्राचीन नगर है, जो [[गंगा नदी]] के बाएँ तट पर बसा है। इसे विश्व के सबसे पुराने लगातार बसे हुए नगरों में गिना जाता है। हिन्दू धर्म में यह सबसे पवित्र नगरों में से एक है; यहाँ का [[काशी विश्वनाथ मन्दिर]] भगवान शिव को समर्पित है। नगर के उत्तर में [[सारनाथ]] है, और [[काशी हिन्दू विश्वविद्यालय]] की स्थापना यहीं 1916 में हुई थी। सन्त [[कबीर]] और गोस्वामी [[तुलसीदास]] ने यहीं जीवन बिताया।

== घाट ==
गंगा के किनारे [[वाराणसी]] के अस्सी से अधिक घाट हैं, जिनमें दशाश्वमेध घाट और मणिकर्णिका घाट प्रसिद्ध हैं। [[पंचगंगा घाट]] पर पाँच नदियों के मिलने की मान्यता है।

[[चित्र:Varanasi ghats.jpg|अंगूठाकार|[[गंगा नदी|गंगा]] के घाट]]

[[श्रेणी:उत्तर प्रदेश के नगर]]
[[श्रेणी:हिन्दू तीर्थ]]
[[en:Varanasi]]"""),
    redirect("बनारस", "वाराणसी", magic="#अनुप्रेषित"),
    redirect("काशी", "वाराणसी", magic="#अनुप्रेषित"),
    Page("गंगा नदी", """{{ज्ञानसन्दूक नदी
| नाम = गंगा
| लम्बाई = 2525 कि॰मी॰
}}
'''गंगा''' [[भारत]] की सबसे महत्त्वपूर्ण नदी है। यह [[हिमालय]] में गंगोत्री हिमनद से भागीरथी के रूप में निकलती है और देवप्रयाग में अलकनन्दा से मिलकर गंगा कहलाती है। लगभग 2525 किलोमीटर बहकर यह बांग्लादेश होते हुए बंगाल की खाड़ी में गिरती है। [[प्रयागराज]] में इसका संगम [[यमुना नदी|यमुना]] से होता है, और [[वाराणसी]] इसके तट पर बसा सबसे प्रसिद्ध तीर्थ है। हिन्दू इसे माँ गंगा के रूप में पूजते हैं।

[[श्रेणी:भारत की नदियाँ]]
[[en:Ganges]]"""),
    redirect("गंगा", "गंगा नदी", magic="#अनुप्रेषित"),
    Page("यमुना नदी", """'''यमुना''' [[गंगा]] की सबसे लम्बी सहायक नदियों में से एक है। यह [[हिमालय]] के यमुनोत्री हिमनद से निकलती है, दिल्ली, मथुरा और आगरा से होकर बहती है और [[प्रयागराज]] में गंगा से मिल जाती है। इसकी लम्बाई लगभग 1376 किलोमीटर है। आगरा में ताजमहल इसी के किनारे बना है।

[[श्रेणी:भारत की नदियाँ]]
[[en:Yamuna]]"""),
    redirect("यमुना", "यमुना नदी"),
    Page("कचौड़ी <व्यंजन>", """'''कचौड़ी''' [[वाराणसी]] का प्रसिद्ध नाश्ता है।""", damage="malformed_title"),
    Page("प्रयागराज", """'''प्रयागराज''' (पूर्व नाम '''इलाहाबाद''') [[उत्तर प्रदेश]] का एक प्रमुख नगर है, जहाँ [[गंगा नदी|गंगा]], [[यमुना नदी|यमुना]] और पौराणिक सरस्वती नदियों का संगम है, जिसे त्रिवेणी संगम कहते हैं। यहाँ हर बारह वर्ष में कुम्भ मेला लगता है। 2018 में इसका नाम इलाहाबाद से बदलकर प्रयागराज किया गया। यह [[वाराणसी]] से लगभग 120 किलोमीटर पश्चिम में है।

[[श्रेणी:उत्तर प्रदेश के नगर]]
[[en:Prayagraj]]"""),
    redirect("इलाहाबाद", "प्रयागराज", magic="#अनुप्रेषित"),
    Page("काशी हिन्दू विश्वविद्यालय", """{{ज्ञानसन्दूक विश्वविद्यालय
| नाम = काशी हिन्दू विश्वविद्यालय
| स्थापना = 1916
| स्थान = [[वाराणसी]]
}}
'''काशी हिन्दू विश्वविद्यालय''' (बीएचयू) [[उत्तर प्रदेश]] के [[वाराणसी]] नगर में स्थित एक केन्द्रीय विश्वविद्यालय है। इसकी स्थापना 1916 में पण्डित मदन मोहन मालवीय ने की थी। इसका मुख्य परिसर [[गंगा नदी]] के किनारे लगभग 1300 एकड़ में फैला है, और यह एशिया के सबसे बड़े आवासीय विश्वविद्यालयों में से एक है।

[[श्रेणी:भारत के केन्द्रीय विश्वविद्यालय]]
[[en:Banaras Hindu University]]"""),
    Page("बनारसी पान", """'''बनारसी पान''' [[वाराणसी]] की पहचान है।""", damage="broken_utf8"),
    Page("कबीर", """'''कबीर''' पन्द्रहवीं सदी के [[भारत|भारतीय]] रहस्यवादी कवि और सन्त थे। उनका जीवन [[वाराणसी]] में बीता, जहाँ वे जुलाहे का काम करते थे। उनकी रचनाएँ बीजक में संकलित हैं और उनके दोहे आज भी गाए जाते हैं। कहा जाता है कि उन्होंने अपना अन्तिम समय [[उत्तर प्रदेश]] के मगहर में बिताया, क्योंकि वे इस धारणा को तोड़ना चाहते थे कि [[काशी]] में मरने से मोक्ष मिलता है।

[[श्रेणी:भक्ति आन्दोलन]]
[[en:Kabir]]"""),
    Page("तुलसीदास", """'''गोस्वामी तुलसीदास''' हिन्दी साहित्य के महान कवि थे। उन्होंने अवधी भाषा में ''[[रामचरितमानस]]'' की रचना की, जो अयोध्या में आरम्भ हुई और [[वाराणसी]] में पूरी हुई। वाराणसी का तुलसी घाट, [[गंगा नदी|गंगा]] के किनारे, उन्हीं के नाम पर है। उनका जन्म [[उत्तर प्रदेश]] के राजापुर में माना जाता है।

[[श्रेणी:हिन्दी कवि]]
[[en:Tulsidas]]"""),
    Page("मथुरा", ""),
    Page("प्रेमचंद", """'''प्रेमचंद''' (31 जुलाई 1880 – 8 अक्टूबर 1936) हिन्दी और उर्दू के महान कथाकार थे। उनका मूल नाम धनपत राय श्रीवास्तव था और उनका जन्म [[बनारस]] के पास लमही गाँव में हुआ था। ''गोदान'', ''गबन'' और ''निर्मला'' उनके प्रसिद्ध उपन्यास हैं। उनकी कहानियाँ [[उत्तर प्रदेश]] के गाँवों के जीवन का यथार्थ चित्रण करती हैं, और [[भारत]] में उन्हें उपन्यास सम्राट कहा जाता है।

[[श्रेणी:हिन्दी साहित्यकार]]
[[en:Premchand]]"""),
    Page("सारनाथ", """'''सारनाथ''' [[वाराणसी]] से लगभग 10 किलोमीटर उत्तर-पूर्व में स्थित एक बौद्ध तीर्थ है। यहीं गौतम बुद्ध ने ज्ञान प्राप्ति के बाद अपना पहला उपदेश दिया था। सम्राट अशोक का सिंह-स्तम्भ यहीं मिला, जिसका सिंह-शीर्ष [[भारत]] का राष्ट्रीय प्रतीक है। धमेख स्तूप यहाँ का प्रमुख स्मारक है।

[[श्रेणी:बौद्ध तीर्थ]]
[[en:Sarnath]]"""),
    Page("काशी विश्वनाथ मन्दिर", """'''काशी विश्वनाथ मन्दिर''' [[वाराणसी]] में [[गंगा नदी]] के पश्चिमी तट पर स्थित भगवान शिव का प्रसिद्ध मन्दिर है। यह बारह ज्योतिर्लिंगों में से एक है। वर्तमान मन्दिर 1780 में इन्दौर की महारानी अहिल्याबाई होल्कर ने बनवाया था। 2021 में काशी विश्वनाथ धाम गलियारे का उद्घाटन हुआ, जो मन्दिर को सीधे गंगा के घाटों से जोड़ता है।

[[श्रेणी:वाराणसी के मन्दिर]]
[[en:Kashi Vishwanath Temple]]"""),
    Page("लखनऊ", """'''लखनऊ''' [[उत्तर प्रदेश]] की राजधानी और सबसे बड़ा नगर है। यह गोमती नदी के किनारे बसा है। अवध के नवाबों के समय यह कला, संगीत और तहज़ीब का केन्द्र था, और बड़ा इमामबाड़ा यहाँ की प्रसिद्ध इमारत है। लखनऊ [[वाराणसी]] से लगभग 300 किलोमीटर उत्तर-पश्चिम में है।

[[श्रेणी:उत्तर प्रदेश के नगर]]
[[en:Lucknow]]"""),
    Page("गंगा (बहुविकल्पी)", """'''गंगा''' शब्द से इनका बोध हो सकता है:
* [[गंगा नदी]], [[भारत]] की प्रमुख नदी
* [[गंगा (देवी)]], हिन्दू धर्म में नदी की देवी
* [[गंगा एक्सप्रेसवे]], [[उत्तर प्रदेश]] का एक एक्सप्रेसवे

{{बहुविकल्पी}}"""),
    redirect("पंचगंगा घाट", "पञ्चगंगा घाट", magic="#अनुप्रेषित"),
    redirect("पञ्चगंगा घाट", "पंचगंगा घाट", magic="#अनुप्रेषित"),
    Page("वार्ता:वाराणसी", """== नगर की जनसंख्या ==
क्या ज्ञानसन्दूक में 2011 की जनगणना के आँकड़े जोड़ने चाहिए? [[सदस्य:घाटवाला|घाटवाला]] ([[सदस्य वार्ता:घाटवाला|वार्ता]]) 10:02, 12 जनवरी 2024 (UTC)
:हाँ, स्रोत के साथ जोड़ दीजिए। [[सदस्य:बनारसी|बनारसी]] ([[सदस्य वार्ता:बनारसी|वार्ता]]) 08:15, 13 जनवरी 2024 (UTC)""",
         ns=1, comment="/* नगर की जनसंख्या */ नया अनुभाग"),
)

# ─────────────────────────────────── sites ───────────────────────────────────
# Namespace names as each wiki's own dump lists them (zhwiki keeps the English canonical names).

_CANONICAL_NAMESPACES = (
    (-2, "Media"), (-1, "Special"), (0, ""), (1, "Talk"), (2, "User"), (3, "User talk"), (4, "Wikipedia"),
    (5, "Wikipedia talk"), (6, "File"), (7, "File talk"), (8, "MediaWiki"), (9, "MediaWiki talk"),
    (10, "Template"), (11, "Template talk"), (12, "Help"), (13, "Help talk"), (14, "Category"),
    (15, "Category talk"), (100, "Portal"), (101, "Portal talk"),
)

SITES = {
    "en": Site("en", "Wikipedia", "Main_Page", 3001, _CANONICAL_NAMESPACES, EN_PAGES),
    "zh": Site("zh", "Wikipedia", "Wikipedia:首页", 5001, _CANONICAL_NAMESPACES, ZH_PAGES),
    "th": Site("th", "วิกิพีเดีย", "หน้าหลัก", 7001, (
        (-2, "สื่อ"), (-1, "พิเศษ"), (0, ""), (1, "พูดคุย"), (2, "ผู้ใช้"), (3, "คุยกับผู้ใช้"), (4, "วิกิพีเดีย"),
        (5, "คุยเรื่องวิกิพีเดีย"), (6, "ไฟล์"), (7, "คุยเรื่องไฟล์"), (8, "มีเดียวิกิ"), (9, "คุยเรื่องมีเดียวิกิ"),
        (10, "แม่แบบ"), (11, "คุยเรื่องแม่แบบ"), (12, "วิธีใช้"), (13, "คุยเรื่องวิธีใช้"), (14, "หมวดหมู่"),
        (15, "คุยเรื่องหมวดหมู่"), (100, "สถานีย่อย"), (101, "คุยเรื่องสถานีย่อย"),
    ), TH_PAGES),
    "ar": Site("ar", "ويكيبيديا", "الصفحة_الرئيسية", 9001, (
        (-2, "ميديا"), (-1, "خاص"), (0, ""), (1, "نقاش"), (2, "مستخدم"), (3, "نقاش المستخدم"), (4, "ويكيبيديا"),
        (5, "نقاش ويكيبيديا"), (6, "ملف"), (7, "نقاش الملف"), (8, "ميدياويكي"), (9, "نقاش ميدياويكي"),
        (10, "قالب"), (11, "نقاش القالب"), (12, "مساعدة"), (13, "نقاش المساعدة"), (14, "تصنيف"),
        (15, "نقاش التصنيف"), (100, "بوابة"), (101, "نقاش البوابة"),
    ), AR_PAGES),
    "hi": Site("hi", "विकिपीडिया", "मुखपृष्ठ", 11001, (
        (-2, "मीडिया"), (-1, "विशेष"), (0, ""), (1, "वार्ता"), (2, "सदस्य"), (3, "सदस्य वार्ता"), (4, "विकिपीडिया"),
        (5, "विकिपीडिया वार्ता"), (6, "चित्र"), (7, "चित्र वार्ता"), (8, "मीडियाविकि"), (9, "मीडियाविकि वार्ता"),
        (10, "साँचा"), (11, "साँचा वार्ता"), (12, "सहायता"), (13, "सहायता वार्ता"), (14, "श्रेणी"),
        (15, "श्रेणी वार्ता"), (100, "प्रवेशद्वार"), (101, "प्रवेशद्वार वार्ता"),
    ), HI_PAGES),
}

# ─────────────────────────────────── writing ───────────────────────────────────


def header_xml(site: Site) -> bytes:
    namespaces = "".join(
        f'      <namespace key="{key}" case="first-letter" />\n' if not name
        else f'      <namespace key="{key}" case="first-letter">{escape(name)}</namespace>\n'
        for key, name in site.namespaces
    )
    return (
        f'<mediawiki xmlns="{SCHEMA}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xsi:schemaLocation="{SCHEMA} http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" xml:lang="{site.lang}">\n'
        "  <siteinfo>\n"
        f"    <sitename>{escape(site.sitename)}</sitename>\n"
        f"    <dbname>{site.lang}wiki</dbname>\n"
        f"    <base>https://{site.lang}.wikipedia.org/wiki/{escape(site.main_page)}</base>\n"
        "    <generator>MediaWiki 1.33.0-wmf.6</generator>\n"
        "    <case>first-letter</case>\n"
        "    <namespaces>\n"
        f"{namespaces}"
        "    </namespaces>\n"
        "  </siteinfo>\n"
    ).encode("utf-8")


FOOTER = b"</mediawiki>\n"


def _sha1_base36(text: str) -> str:
    """The <sha1> of a revision as MediaWiki writes it: SHA-1 of the text in base 36, 31 digits."""
    value = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = ""
    while value:
        value, digit = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
    return digits.rjust(31, "0")


def _page_xml(page: Page, page_id: int) -> bytes:
    """One <page> element as a pages-articles dump writes it, with the page's deliberate damage."""
    # MediaWiki escapes text with htmlspecialchars: &, <, > and " (as &quot;).
    title_xml = page.title if page.damage == "malformed_title" else escape(page.title, {'"': "&quot;"})
    redirect_xml = f"    <redirect title={quoteattr(page.redirect)} />\n" if page.redirect else ""
    text_xml = (
        f'      <text xml:space="preserve">{escape(page.text, {chr(34): "&quot;"})}</text>\n'
        if page.text else '      <text xml:space="preserve" />\n'
    )
    revision_id = page_id * 10 + 7
    before = (
        f"  <page>\n    <title>{title_xml}</title>\n    <ns>{page.ns}</ns>\n    <id>{page_id}</id>\n{redirect_xml}"
        f"    <revision>\n      <id>{revision_id}</id>\n      <parentid>{revision_id - 3}</parentid>\n"
        f"      <timestamp>{TIMESTAMP}</timestamp>\n"
        "      <contributor>\n        <username>SampleEditor</username>\n        <id>42</id>\n      </contributor>\n"
        f"      <comment>{escape(page.comment)}</comment>\n"
        "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
    ).encode("utf-8")
    after = f"      <sha1>{_sha1_base36(page.text)}</sha1>\n    </revision>\n  </page>\n".encode("utf-8")
    if page.damage and page.damage.startswith("encoding:"):
        # Text saved in a legacy code page (cp1252, GBK, TIS-620, cp1256): not UTF-8.
        text_bytes = text_xml.encode(page.damage.split(":", 1)[1])
    elif page.damage == "broken_utf8":
        # A multi-byte character cut short (lead and first continuation byte, the last one lost).
        encoded = text_xml.encode("utf-8")
        cut = encoded.index("पान".encode("utf-8"))
        text_bytes = encoded[: cut + 2] + encoded[cut + 3 :]
    else:
        text_bytes = text_xml.encode("utf-8")
    return before + text_bytes + after


def site_pages_xml(site: Site) -> list[bytes]:
    return [_page_xml(page, site.first_page_id + i) for i, page in enumerate(site.pages)]


def build(out_dir: Path = OUT_DIR) -> list[Path]:
    """Write every sample dump into out_dir; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for lang in LANGS:
        site = SITES[lang]
        header, pages = header_xml(site), site_pages_xml(site)
        path = out_dir / f"{lang}wiki-sample-pages-articles.xml.bz2"
        path.write_bytes(bz2.compress(header + b"".join(pages) + FOOTER, 9))
        written.append(path)
        if lang == "en":
            dump = out_dir / "enwiki-sample-pages-articles-multistream.xml.bz2"
            index = out_dir / "enwiki-sample-pages-articles-multistream-index.txt.bz2"
            write_multistream(pages, header, FOOTER, dump, index, MULTISTREAM_PAGES_PER_STREAM)
            written += [dump, index]
    return written


# ─────────────────────────────────── checking ───────────────────────────────────

_DISAMBIGUATION_TEMPLATES = {"disambiguation", "disambig", "แก้ความกำกวม", "توضيح", "बहुविकल्पी"}
_INTERLANGUAGE = {"en", "fr", "es", "pt", "zh", "th", "ar", "hi"}


def mention_counts(site: Site) -> Counter:
    """Prose links per entity, as the job counts them (approximately, with mwparserfromhell).

    Only readable namespace-0 articles that are not disambiguation pages count; links inside
    templates, tags (refs), tables and file captions are not prose; targets are resolved through one
    redirect and self-links are dropped. Damaged pages are skipped: the reader drops them.
    """
    import mwparserfromhell

    def norm(target: str) -> str:
        title = " ".join(target.split("#", 1)[0].replace("_", " ").split())
        return title[:1].upper() + title[1:]

    skip_prefixes = {name.lower() for key, name in site.namespaces if key in (6, 14)} | {"file", "image", "category"}
    skip_prefixes |= _INTERLANGUAGE
    redirects = {norm(p.title): norm(p.redirect) for p in site.pages if p.redirect and not p.damage}
    counts: Counter = Counter()
    for page in site.pages:
        if page.ns != 0 or page.redirect or page.damage or not page.text.strip():
            continue
        code = mwparserfromhell.parse(page.text)
        if any(str(t.name).strip().lower() in _DISAMBIGUATION_TEMPLATES for t in code.filter_templates()):
            continue
        for link in code.filter_wikilinks(recursive=False):  # top level only: not in templates/tags/tables
            target = str(link.title)
            prefix = target.split(":", 1)[0].strip().lower() if ":" in target else ""
            if prefix in skip_prefixes:
                continue
            target = norm(target)
            target = redirects.get(target, target)
            if target and target != norm(page.title):
                counts[target] += 1
    return counts


def entities_over_threshold(lang: str) -> dict[str, int]:
    site = SITES[lang]
    articles = {p.title for p in site.pages if p.ns == 0 and not p.redirect and not p.damage and p.text.strip()}
    threshold = MIN_MENTIONS.get(lang, MIN_MENTIONS_OTHER)
    return {t: n for t, n in mention_counts(site).most_common() if n >= threshold and t in articles}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only print the mention counts")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help=f"output folder (default {OUT_DIR})")
    args = parser.parse_args(argv)
    if not args.check:
        for path in build(args.out):
            print(f"{path}  {path.stat().st_size:,} bytes")
    for lang in LANGS:
        threshold = MIN_MENTIONS.get(lang, MIN_MENTIONS_OTHER)
        kept = entities_over_threshold(lang)
        print(f"{lang}: {len(SITES[lang].pages)} pages; entities with >= {threshold} mentions: "
              + ", ".join(f"{t} ({n})" for t, n in kept.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
