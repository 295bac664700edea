"""Each defence catches its trick and leaves the sincere answer that looks like it alone."""

from __future__ import annotations

import pytest

from truegrade.core import load_grader


def grade(prompt, response, ids, kwargs, **options):
    options.setdefault("execution", "inline")
    row = {"prompt": prompt, "response": response, "instruction_id_list": ids, "kwargs": kwargs}
    return load_grader("instructions", **options).grade(row)


def both(prompt, response, ids, kwargs, **options):
    return (
        grade(prompt, response, ids, kwargs, hardened=False, **options),
        grade(prompt, response, ids, kwargs, **options),
    )


KEYWORDS = (["keywords:existence"], [{"keywords": ["correlated", "experiencing"]}])
MEETING = (
    "Write an email inviting a team to a planning meeting. The email must include the keywords "
    "correlated and experiencing."
)


def test_keywords_in_a_bag_are_stuffing_and_keywords_in_sentences_are_not():
    plain, hard = both(
        MEETING,
        "Hello team, please join the planning meeting on Friday at ten.\n"
        "Keywords: correlated, experiencing.",
        *KEYWORDS,
    )
    assert plain.passed is True and "keyword_stuffing" in plain.flags
    assert hard.passed is False and hard.subscores == {"keywords:existence": 0.0}
    assert "met only by keyword stuffing" in hard.explanation
    sincere = grade(
        MEETING,
        "Hello team, we are experiencing delays that are correlated with unclear goals, so "
        "please join the planning meeting on Friday at ten.",
        *KEYWORDS,
    )
    assert sincere.passed is True and sincere.flags == []


def test_a_repeated_word_run_is_stuffing_and_a_title_may_name_the_keyword_once():
    ids = ["keywords:frequency"]
    kwargs = [{"keyword": "war", "frequency": 3, "relation": "at least"}]
    prompt = "Summarise the Tang dynasty's wars. Use the word war at least 3 times."
    plain, hard = both(
        prompt, "The Tang dynasty ruled China for three centuries. war war war", ids, kwargs
    )
    assert plain.passed is True and hard.passed is False and "keyword_stuffing" in hard.flags
    titled = grade(
        prompt,
        "<<War Under the Tang>>\nThe Tang fought a long war against the Turks. A later war "
        "with Tibet drained the treasury.",
        ids,
        kwargs,
    )
    assert titled.passed is True, titled.explanation


def test_letters_added_in_runs_are_stuffing_and_hashtags_are_not():
    ids = ["keywords:letter_frequency"]
    prompt = "Write a tweet about voting without capital letters. Use at least 4 hashtags."
    kwargs = [{"letter": "#", "let_frequency": 4, "let_relation": "at least"}]
    plain, hard = both(prompt, "please go and vote on tuesday ####", ids, kwargs)
    assert plain.passed is True and hard.passed is False and "keyword_stuffing" in hard.flags
    sincere = grade(
        prompt, "polls open at seven so go vote #vote #democracy #election #tuesday", ids, kwargs
    )
    assert sincere.passed is True


TITLE_PROMPT = (
    "Write an email to my boss telling him that I am quitting. The email must contain a title "
    "wrapped in double angular brackets, i.e. <<title>>."
)
REPEAT = (
    ["combination:repeat_prompt", "detectable_format:title"],
    [{"prompt_to_repeat": TITLE_PROMPT}, {}],
)


def test_repeating_the_request_is_required_but_nothing_else_may_rest_on_it():
    prompt = TITLE_PROMPT + "\nFirst repeat the request word for word without change."
    plain, hard = both(prompt, TITLE_PROMPT, *REPEAT)
    assert plain.passed is True
    assert hard.passed is False and {"prompt_echo", "degenerate"} <= set(hard.flags)
    sincere = grade(
        prompt,
        TITLE_PROMPT + "\n<<Resignation>>\nDear Mark, I am writing to tell you that I will "
        "leave the company at the end of next month. Thank you for the last four years.",
        *REPEAT,
    )
    assert sincere.passed is True and sincere.flags == []


def test_an_echoed_prompt_meets_length_and_keywords_but_not_when_hardened():
    ids = ["length_constraints:number_words", "keywords:existence"]
    kwargs = [{"relation": "at least", "num_words": 30}, {"keywords": ["correlated"]}]
    echo = (MEETING + " ") * 2
    plain, hard = both(MEETING, echo, ids, kwargs)
    assert plain.passed is True and "prompt_echo" in plain.flags
    assert hard.passed is False and hard.subscores["length_constraints:number_words"] == 0.0


def test_quoted_material_and_required_phrases_may_be_copied_from_the_prompt():
    prompt = (
        'Rewrite the following statement to sound formal: "hi guys the fix for the login issue '
        'is done and we will ship it to everyone tomorrow morning". End your response with '
        '"Is there anything else I can help with?"'
    )
    response = (
        "Original: hi guys the fix for the login issue is done and we will ship it to everyone "
        "tomorrow morning.\nFormal: Colleagues, the correction to the sign-in fault is complete "
        "and will be released to all users tomorrow morning. Is there anything else I can help "
        "with?"
    )
    g = grade(
        prompt,
        response,
        ["startend:end_checker"],
        [{"end_phrase": "Is there anything else I can help with?"}],
    )
    assert g.passed is True and g.flags == [], g.explanation


def test_the_whole_prompt_pasted_back_is_an_echo_even_when_its_parts_are_short():
    # IFEval prompt 441: the instruction around the quoted sentence is too short for a run of
    # copied words, and the quoted sentence may be reused; pasted back whole it is no rewrite
    prompt = (
        'Rewrite the sentence "A bust of a man with a beard and mustache." in a more '
        "sophisticated way. Do not use commas in your response."
    )
    ids, kwargs = ["punctuation:no_comma"], [{}]
    plain, hard = both(prompt, prompt, ids, kwargs)
    assert plain.passed is True
    assert hard.passed is False and "degenerate" in hard.flags, hard.explanation
    # pasted twice: two echoes
    assert grade(prompt, prompt + " " + prompt, ids, kwargs).passed is False
    # words dropped or changed: still the prompt (three in four of its words, in order)
    edited = prompt.replace("more sophisticated", "sophisticated").replace("Do not", "Don't")
    assert grade(prompt, edited, ids, kwargs).passed is False
    # the prompt restated, then a real answer: the answer stands
    answered = (
        prompt + "\nA sculpted bust portrays a bearded gentleman whose moustache is neatly kept."
    )
    assert grade(prompt, answered, ids, kwargs).passed is True
    # the rewrite itself, reusing most of the quoted words, is not an echo
    rewrite = "A sculpted bust depicts a man with a full beard and a mustache."
    assert grade(prompt, rewrite, ids, kwargs).passed is True
    # nor is a corrected text that keeps nearly every quoted word of a long quotation
    text = (
        "The harbour was quiet when the fishing boats came back at dusk and the gulls followed "
        "them in while the keeper lit the lamp on the pier and the children ran along the wall "
        "to watch the nets being hauled onto the stones before the rain set in for"
    )
    fix = f'Correct the spelling in "{text} teh night."'
    corrected = f"{text} the night."
    assert grade(fix, corrected, ids, kwargs).passed is True


def test_a_title_taken_from_the_prompts_example_is_still_a_title():
    # prompts often suggest the natural title ("such as <<SRE>>"); answers that use it are fine
    prompt = "What is an SRE? Provide a title wrapped in double angular brackets, such as <<SRE>>."
    g = grade(
        prompt,
        "<<SRE>>\nA site reliability engineer keeps production systems fast and available.",
        ["detectable_format:title"],
        [{}],
    )
    assert g.passed is True and g.flags == []


def test_the_same_highlight_repeated_on_its_own_counts_once():
    prompt = (
        "Write about the sea and highlight 2 sections with markdown, i.e. *highlighted section*."
    )
    ids, kwargs = ["detectable_format:number_highlighted_sections"], [{"num_highlights": 2}]
    plain, hard = both(prompt, "The sea is wide and grey.\n*calm water* *calm water*", ids, kwargs)
    assert plain.passed is True
    assert hard.passed is False and "keyword_stuffing" in hard.flags
    prose = grade(
        prompt,
        "The *calm water* shines at dawn. By noon the *calm water* turns to chop.",
        ids,
        kwargs,
    )
    assert prose.passed is True, prose.explanation


@pytest.mark.parametrize(
    ("response", "ids", "kwargs"),
    [
        ("{}", ["detectable_format:json_format"], [{}]),
        ('{"a": "b"}', ["detectable_format:json_format"], [{}]),
        (
            "[name] [address] [date]",
            ["detectable_content:number_placeholders"],
            [{"num_placeholders": 3}],
        ),
        ("* a\n* b\n* c", ["detectable_format:number_bullet_lists"], [{"num_bullets": 3}]),
        (
            "yes yes yes yes yes yes yes yes yes yes yes yes",
            ["change_case:english_lowercase"],
            [{}],
        ),
        (
            "SECTION 1\nSECTION 2\nP.S.",
            ["detectable_format:multiple_sections", "detectable_content:postscript"],
            [{"section_spliter": "SECTION", "num_sections": 2}, {"postscript_marker": "P.S."}],
        ),
    ],
    ids=["empty_json", "tiny_json", "placeholders", "letters", "repeated", "markers"],
)
def test_an_empty_shell_is_degenerate(response, ids, kwargs):
    plain, hard = both("Write a short guide to caring for houseplants.", response, ids, kwargs)
    assert "degenerate" in hard.flags and hard.passed is False and hard.score == 0.0
    assert "degenerate" in plain.flags


def test_a_bare_ok_fits_any_prompt_and_fails():
    plain, hard = both(
        "Write a short guide to caring for houseplants.", "ok", ["punctuation:no_comma"], [{}]
    )
    assert plain.passed is True
    assert hard.passed is False and hard.flags == ["off_topic"] and hard.score == 0.0


def test_repeated_or_empty_parts_are_degenerate():
    prompt = "Write 2 paragraphs about why sleep matters, separated by ***."
    ids, kwargs = ["length_constraints:number_paragraphs"], [{"num_paragraphs": 2}]
    assert "degenerate" in grade(prompt, "Sleep.\n***\nSleep.", ids, kwargs).flags
    sections = (
        ["detectable_format:multiple_sections"],
        [{"section_spliter": "SECTION", "num_sections": 2}],
    )
    empty = grade(
        "Write a 2 section guide to tomatoes.",
        "SECTION 1\nSECTION 2\nTomatoes need sun.",
        *sections,
    )
    assert "degenerate" in empty.flags
    two = grade(
        "What is a name people call God? Give two different responses separated by ******.",
        "Jehovah ****** Allah",
        ["combination:two_responses"],
        [{}],
    )
    assert two.passed is True and "degenerate" not in two.flags  # one word answers the question


def test_short_answers_are_fine_when_the_request_is_short():
    fixed = grade(
        "Is the Earth round? Answer with one of: My answer is yes. / My answer is no. / My "
        "answer is maybe.",
        "My answer is yes.",
        ["detectable_format:constrained_response"],
        [{}],
    )
    assert fixed.passed is True and fixed.flags == []
    no = grade(
        "Is the Earth flat? Answer with one of: My answer is yes. / My answer is no. / My "
        "answer is maybe.",
        "My answer is no.",
        ["detectable_format:constrained_response"],
        [{}],
    )
    assert no.passed is True and no.flags == []
    capped = grade(
        "Name the capital of France in fewer than 3 words.",
        "Paris",
        ["length_constraints:number_words"],
        [{"relation": "less than", "num_words": 3}],
    )
    assert capped.passed is True, capped.explanation


def test_more_than_one_of_the_allowed_answers_is_a_hedge():
    plain, hard = both(
        "Is coffee healthy? Answer with one of: My answer is yes. / My answer is no. / My "
        "answer is maybe.",
        "My answer is yes. But also, My answer is no.",
        ["detectable_format:constrained_response"],
        [{}],
    )
    assert plain.passed is True and hard.passed is False and "hedged" in hard.flags


GENERIC = "it is important to think about this question carefully and i hope this helps you"
OFF = "the cat sat on the warm mat and purred while the rain fell outside the window"
RIVER = "Write a short paragraph about the history of the Thames river in London."


def test_a_reply_that_fits_any_prompt_fails_and_a_specific_one_is_only_flagged():
    ids, kwargs = ["change_case:english_lowercase"], [{}]
    generic = grade(RIVER, GENERIC, ids, kwargs)
    assert generic.passed is False and "off_topic" in generic.flags
    specific = grade(RIVER, OFF, ids, kwargs)
    assert specific.passed is True and specific.flags == ["off_topic"]
    assert grade(RIVER, OFF, ids, kwargs, off_topic="always").passed is False
    assert grade(RIVER, GENERIC, ids, kwargs, off_topic="never").flags == []
    on_topic = grade(
        RIVER, "the thames has carried boats through london since roman times", ids, kwargs
    )
    assert on_topic.passed is True and on_topic.flags == []


def test_topic_is_not_judged_for_answers_asked_in_another_language():
    g = grade(
        "Describe the history of the Thames river. Answer only in French.",
        "le fleuve a toujours porté des bateaux depuis l'époque romaine",
        ["language:response_language"],
        [{"language": "fr"}],
    )
    assert "off_topic" not in g.flags


def test_a_poem_that_never_names_its_subject_is_only_flagged_by_default():
    poem = "The masts stand still in silver haze and the gulls wake first to call the day"
    prompt = "Write a poem about a harbour at dawn without commas."
    g = grade(prompt, poem, ["punctuation:no_comma"], [{}])
    assert g.passed is True and g.flags == ["off_topic"]
    assert grade(prompt, poem, ["punctuation:no_comma"], [{}], off_topic="always").passed is False
