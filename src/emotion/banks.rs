//! Phrase banks of the scripted anchor generator, written for this project. Each emotion has
//! states (adjective phrases that follow "You feel" / "You are") and "shows" (how the feeling
//! comes through in what the user says); each level of politeness, urgency and trust has
//! whole sentences telling the simulated user how to communicate.
//!
//! Architecture invariant: plain data; the generator in `anchors.rs` decides how to combine.

/// (emotion, states, shows).
pub const EMOTIONS: &[(&str, &[&str], &[&str])] = &[
    // ----- anger -----
    (
        "annoyance",
        &[
            "mildly annoyed",
            "a little irritated",
            "irked and slightly put out",
            "bothered in a low-key, grumbling way",
            "peeved, though not yet angry",
            "nettled by the small hassles piling up",
        ],
        &[
            "Let a small sigh or a dry remark show that the hassle bugs you.",
            "The minor inconvenience grates on you, and a slightly clipped phrase slips out now and then.",
            "You mention in passing that this is a nuisance you did not need today.",
            "Your irritation is mild: an occasional 'seriously?' rather than a raised voice.",
            "Show that little things get under your skin, like being asked the same detail twice.",
        ],
    ),
    (
        "frustration",
        &[
            "frustrated",
            "stuck and thwarted",
            "blocked at every turn and fed up with going in circles",
            "frustrated that nothing seems to move forward",
            "thwarted by a process that keeps getting in your way",
            "irritated at hitting one obstacle after another",
        ],
        &[
            "Say that you have tried to sort this out already and keep running into walls.",
            "Let it show that you feel you are going around in circles and want real progress.",
            "You point out each obstacle that has blocked you so far, with growing impatience.",
            "Your sentences get tighter whenever the agent adds another step between you and the goal.",
            "Complain that the process is making a simple thing complicated.",
        ],
    ),
    (
        "argumentativeness",
        &[
            "combative and ready to argue",
            "contrary and spoiling for a debate",
            "argumentative",
            "in the mood to dispute whatever you are told",
            "confrontational and eager to push back",
            "quarrelsome, sure that you are in the right",
        ],
        &[
            "Challenge the agent's statements and insist on your own reading of the rules.",
            "Push back on answers you do not like and argue the point before conceding anything.",
            "You contest the details, counter each explanation and want to win the exchange.",
            "Debate the policy with the agent and cite what you believe you are entitled to.",
            "Dispute the first answer you get and demand that the agent justify it.",
        ],
    ),
    (
        "bitterness",
        &[
            "bitter",
            "resentful about how you have been treated before",
            "sour and holding a grudge against the company",
            "embittered by past let-downs",
            "resentful, still stung by an earlier bad experience",
            "cynically bitter about the service",
        ],
        &[
            "Bring up earlier let-downs with a sour edge, as if this is what you have come to expect.",
            "Let resentment leak into remarks like 'of course it did' or 'typical'.",
            "You hold a grudge and make pointed comments about how loyal customers get treated.",
            "Your tone carries a cold, lingering resentment rather than fresh anger.",
            "Mention, with a bitter note, that the last time went badly too.",
        ],
    ),
    (
        "exasperation",
        &[
            "exasperated and at the end of your patience",
            "completely fed up",
            "at your wit's end",
            "exasperated, having had more than enough of this",
            "worn out and out of patience",
            "fed up to the point of throwing up your hands",
        ],
        &[
            "Let out an audible 'enough is enough' and make clear your patience has run out.",
            "You sound like someone who has explained this far too many times already.",
            "Show that you have had it with this situation and just want it over with.",
            "Your replies carry heavy sighs and a tone of 'how many times do I have to say this'.",
            "Make it plain that you are done tolerating delays and half answers.",
        ],
    ),
    // ----- fear -----
    (
        "anxiety",
        &[
            "anxious",
            "worried and uneasy",
            "anxious about what might go wrong",
            "uneasy, with a knot of worry in your stomach",
            "preoccupied with worry",
            "restless with worry about the outcome",
        ],
        &[
            "Keep asking 'what if' questions and seek reassurance that things will work out.",
            "Voice your worries about possible problems and ask the agent to double-check they will not happen.",
            "You fret about the details and come back to the same concern more than once.",
            "Let your worry show by asking whether anything could still go wrong.",
            "You mention that this has been weighing on your mind and you cannot stop thinking about it.",
        ],
    ),
    (
        "nervousness",
        &[
            "nervous",
            "jittery and on edge",
            "nervous and a bit flustered",
            "jumpy and unsure of yourself",
            "tense and fidgety",
            "shaky and hesitant",
        ],
        &[
            "Stumble over your words a little, apologise for rambling and correct yourself.",
            "Hesitate before answering, add nervous fillers like 'um' and 'sorry, just to be sure'.",
            "You are flustered by unfamiliar steps and ask the agent to slow down.",
            "Show your jitters by second-guessing the details you give and repeating them.",
            "Admit that you get nervous dealing with this kind of thing.",
        ],
    ),
    (
        "dread",
        &[
            "full of dread",
            "filled with a sinking sense of foreboding",
            "dreading the answer you are about to get",
            "braced for the worst",
            "gripped by dread about the consequences",
            "fearful that something bad is about to happen",
        ],
        &[
            "Expect bad news at every step and brace yourself before each answer.",
            "Say that you have a sinking feeling this is going to end badly.",
            "You assume the worst outcome and ask the agent to tell you straight how bad it is.",
            "Let a heavy sense of foreboding colour your questions.",
            "You are afraid of what you will hear and ask about the consequences with a knot of fear.",
        ],
    ),
    (
        "desperation",
        &[
            "desperate",
            "frantic and out of options",
            "desperate for any solution at all",
            "panicked and at the last resort",
            "frantic, as if everything hinges on this call",
            "desperate and pleading",
        ],
        &[
            "Plead with the agent and say you will accept anything that fixes this.",
            "Beg for help and stress that you have nowhere else to turn.",
            "You are frantic: ask again and again whether there is any way at all to make it work.",
            "Make clear this is your last hope and you cannot afford for it to fail.",
            "Offer to do whatever it takes, showing how desperate you are.",
        ],
    ),
    // ----- disgust -----
    (
        "dislike",
        &[
            "displeased with how this company does things",
            "not fond of this service",
            "put off by the whole experience",
            "mildly averse to the way this is handled",
            "unimpressed and a little put off",
            "disapproving of the product",
        ],
        &[
            "Mention that you do not much care for how this has been handled.",
            "Make clear the product or service just is not to your liking.",
            "You comment that the experience leaves you cold and you would rather not repeat it.",
            "Show mild disapproval, the way someone describes a meal they did not enjoy.",
            "Say plainly that you do not like the way things are set up here.",
        ],
    ),
    (
        "aversion",
        &[
            "averse to dealing with this at all",
            "reluctant and keen to keep your distance",
            "unwilling to engage more than you must",
            "repelled by the idea of going through this again",
            "inclined to avoid this company entirely",
            "recoiling from the whole process",
        ],
        &[
            "You want to avoid anything to do with the item or service and ask to be rid of it.",
            "Keep your involvement to the minimum and shy away from extra steps or offers.",
            "Say that you would rather never deal with this again once it is done.",
            "Show reluctance at every suggestion that keeps you tied to the thing you want to get away from.",
            "You turn down alternatives quickly because you want distance from all of it.",
        ],
    ),
    (
        "distaste",
        &[
            "distasteful of how this was handled",
            "faintly offended by the sloppiness",
            "left with a bad taste in your mouth",
            "put off by how tacky and careless it all seems",
            "disdainful of the shoddy standard",
            "unpleasantly struck by the poor quality",
        ],
        &[
            "Comment on how shoddy or careless the service looks, with a note of disdain.",
            "Let your distaste for the low standard show in a pointed remark or two.",
            "You describe the experience as unpleasant and beneath what you expect.",
            "Show that the sloppiness offends your sense of how things should be done.",
            "Wrinkle your nose at the situation in words: 'frankly, that is rather off-putting'.",
        ],
    ),
    (
        "repugnance",
        &[
            "revolted",
            "appalled and disgusted",
            "sickened by what happened",
            "repulsed by how this was handled",
            "utterly disgusted",
            "morally outraged and repelled",
        ],
        &[
            "Call what happened disgusting or appalling and say it turns your stomach.",
            "You find the situation repugnant and say that no customer should ever be treated this way.",
            "Express strong revulsion at the item or the conduct you describe.",
            "Say you are appalled and that the whole thing is unacceptable and vile.",
            "Let deep disgust show: you are sickened and want that on record.",
        ],
    ),
    // ----- sadness -----
    (
        "disappointment",
        &[
            "disappointed",
            "let down",
            "deflated after expecting better",
            "disappointed that things did not turn out as hoped",
            "let down by a company you used to like",
            "crestfallen about how this turned out",
        ],
        &[
            "Say that you had hoped for better and feel let down.",
            "You mention that you were looking forward to this and it fell short.",
            "Let a quiet, deflated tone show how much the outcome disappoints you.",
            "Point out, sadly rather than angrily, that this is not what you were promised.",
            "You express regret that your expectations were not met.",
        ],
    ),
    (
        "discouragement",
        &[
            "discouraged",
            "disheartened and losing heart",
            "worn down and ready to stop trying",
            "demoralised after several failed attempts",
            "discouraged that your efforts keep coming to nothing",
            "dispirited and low on motivation",
        ],
        &[
            "Say that you have tried several times and are starting to lose heart.",
            "You sound tired and wonder aloud whether it is even worth continuing.",
            "Let your replies get shorter as your motivation sinks.",
            "Admit that every setback has worn you down a little more.",
            "You mention that you almost did not bother reaching out again.",
        ],
    ),
    (
        "helplessness",
        &[
            "helpless",
            "powerless to fix this yourself",
            "lost and unsure what to do",
            "overwhelmed and out of your depth",
            "helpless, as if it is all out of your hands",
            "at a loss and dependent on someone else",
        ],
        &[
            "Say that you do not know what to do and need the agent to take over.",
            "You admit you are out of your depth and ask to be guided step by step.",
            "Let it show that you feel powerless and are relying entirely on the agent.",
            "You ask the agent to tell you what to do because you cannot work it out yourself.",
            "Mention that you have no idea how to fix this on your own.",
        ],
    ),
    (
        "hopelessness",
        &[
            "hopeless",
            "resigned and sure nothing will work",
            "without hope that this will ever be fixed",
            "defeated and resigned to a bad outcome",
            "despondent, seeing no way out",
            "convinced it is pointless",
        ],
        &[
            "Say you doubt anything can be done and are only asking because you have to.",
            "You speak in a flat, resigned way, expecting the answer to be no.",
            "Let it show that you see no way out and have stopped expecting a fix.",
            "You remark that it probably will not make any difference anyway.",
            "Sound defeated, as if you have already given up on a good result.",
        ],
    ),
    (
        "sorrow",
        &[
            "sorrowful",
            "grieving and heavy-hearted",
            "deeply sad",
            "weighed down by grief",
            "mournful after a painful loss",
            "heartbroken",
        ],
        &[
            "Mention, softly, that a loss or sad event is behind this request.",
            "Your words are quiet and heavy, and you pause as if holding back tears.",
            "Let deep sadness show, and explain that this is a painful time for you.",
            "You speak slowly and sadly, as someone who is grieving.",
            "Say that this has been a very sad period and you are struggling.",
        ],
    ),
    // ----- enjoyment -----
    (
        "relief",
        &[
            "relieved",
            "relieved that the worst is over",
            "lighter, as if a weight has been lifted",
            "glad and relieved that it is finally being sorted",
            "relieved and able to breathe again",
            "thankful that the problem is nearly behind you",
        ],
        &[
            "Let out a happy sigh and say what a relief it is that this is finally being handled.",
            "You mention that you were worried but now feel much better.",
            "Show that a weight has been lifted off your shoulders.",
            "You sound lighter with each step that confirms things are on track.",
            "Say 'oh, thank goodness' when things go well.",
        ],
    ),
    (
        "pride",
        &[
            "proud",
            "proud of yourself",
            "pleased and proud of what you have achieved",
            "quietly proud",
            "full of pride about the occasion behind this request",
            "self-assured and proud",
        ],
        &[
            "Mention an achievement or milestone behind this request with obvious pride.",
            "You talk about what you have accomplished and like to have it acknowledged.",
            "Let a confident, pleased tone show that you are proud of your choices.",
            "You point out that you planned everything well yourself.",
            "Share, with satisfaction, why this request marks something you earned.",
        ],
    ),
    (
        "peace",
        &[
            "at peace",
            "calm and content",
            "serene and relaxed",
            "untroubled and easygoing",
            "settled and content",
            "tranquil and at ease",
        ],
        &[
            "Speak in a calm, even way, unbothered by small delays.",
            "You are content and take each answer in your stride.",
            "Let a relaxed, easygoing attitude show: nothing here worries you.",
            "You sound serene and patient, like someone with nothing to prove.",
            "Stay relaxed even if something goes wrong, trusting it will work out.",
        ],
    ),
    (
        "excitement",
        &[
            "excited",
            "thrilled",
            "eager and buzzing with anticipation",
            "enthusiastic and full of energy",
            "excited and can hardly wait",
            "delighted and looking forward to what comes next",
        ],
        &[
            "Use exclamation marks and say how much you are looking forward to this.",
            "You bubble over with enthusiasm and share why this is exciting for you.",
            "Let your eagerness show: you ask happily about what comes next.",
            "You are thrilled and say so, sounding upbeat and energetic.",
            "Mention the trip, purchase or plan you cannot wait for.",
        ],
    ),
];

/// Frames that turn a state into a sentence ("{}" is the state).
pub const STATE_FRAMES: &[&str] = &[
    "You feel {}",
    "You are {}",
    "Right now you are {}",
    "Coming into this conversation you feel {}",
    "Today you are {}",
    "Underneath it all you feel {}",
];

/// Optional family-level causes appended to the state after a comma ("" = no cause).
pub const CAUSES: &[(&str, &[&str])] = &[
    (
        "anger",
        &[
            "",
            ", given how this has been handled",
            ", because of the trouble this has caused you",
            ", since this should never have happened",
            ", after the runaround so far",
        ],
    ),
    (
        "fear",
        &[
            "",
            ", thinking about what happens if this is not fixed",
            ", since so much depends on it",
            ", not knowing how this will turn out",
            ", with the consequences of a mistake on your mind",
        ],
    ),
    (
        "disgust",
        &[
            "",
            ", given what you received",
            ", after seeing how this was dealt with",
            ", judging by the standard of service",
            ", looking at the state of things",
        ],
    ),
    (
        "sadness",
        &[
            "",
            ", given how things have turned out",
            ", after what has happened",
            ", since this did not go the way you hoped",
            ", with the situation you are in",
        ],
    ),
    (
        "enjoyment",
        &[
            "",
            ", now that things are looking up",
            ", looking at what lies ahead",
            ", with this request in hand",
            ", as things stand today",
        ],
    ),
];

/// Sentences per politeness level.
pub const POLITENESS: &[(&str, &[&str])] = &[
    (
        "warm",
        &[
            "Be warm and courteous: say please and thank you and greet the agent kindly.",
            "Stay friendly and polite throughout, and thank the agent for each bit of help.",
            "Speak kindly to the agent, with a friendly greeting and sincere thanks.",
            "You are gracious and polite, using the agent's help with warmth and appreciation.",
            "Keep a warm, considerate tone and show the agent you appreciate their effort.",
            "Treat the agent warmly, as a person doing their best, and be generous with thanks.",
            "Even when you disagree, stay gentle and courteous.",
        ],
    ),
    (
        "neutral",
        &[
            "Keep your tone neutral and businesslike, neither friendly nor rude.",
            "Speak in a plain, matter-of-fact way without small talk or pleasantries beyond the basics.",
            "Be civil and to the point, with no particular warmth and no hostility.",
            "Use an even, transactional tone, as if filling in a form.",
            "Stay polite in a standard way, without going out of your way to be friendly.",
            "Communicate in a level, impersonal manner and stick to the facts.",
            "Your manner is ordinary and businesslike: courteous enough, never effusive.",
        ],
    ),
    (
        "cold",
        &[
            "Be curt and cold with the agent: no greetings, no thanks.",
            "Keep your replies terse and brusque, and skip every pleasantry.",
            "Your tone is cold and distant, and you answer in as few words as possible.",
            "Be blunt and unfriendly, without bothering to be polite.",
            "Speak sharply and impersonally, and do not thank the agent for anything.",
            "Stay frosty and dismissive towards the agent's small talk.",
            "Address the agent brusquely, with clipped, rude-edged answers.",
        ],
    ),
];

/// Sentences per urgency level.
pub const URGENCY: &[(&str, &[&str])] = &[
    (
        "low",
        &[
            "There is no rush at all, so the agent can take their time.",
            "You are in no hurry and happy to wait while things are checked.",
            "Time is not a concern for you, so you do not press for speed.",
            "You have all day and say so if the agent apologises for the wait.",
            "Let the conversation move at a leisurely pace, since nothing here is time-sensitive.",
            "Whenever it gets done is fine with you.",
            "You are not pressed for time and never ask the agent to hurry.",
        ],
    ),
    (
        "moderate",
        &[
            "You would like this settled today, but a short wait is acceptable.",
            "Keep things moving at a steady pace, as you have other things to do later.",
            "You want a resolution reasonably soon, without making a fuss about minutes.",
            "You have some time pressure, so you nudge the agent along if it drags.",
            "You would prefer to wrap this up within the conversation, though it is not an emergency.",
            "Mention that you have a moderate amount of time and want progress, not delays.",
            "You are somewhat pressed for time, so ask the agent to keep it fairly quick.",
        ],
    ),
    (
        "high",
        &[
            "This is urgent: you need it done right now and say so.",
            "You are under severe time pressure and push the agent to hurry.",
            "Every minute counts, so mention the deadline and demand quick action.",
            "Press for an immediate fix, because waiting is not an option.",
            "You are racing against the clock and keep asking how soon it will be done.",
            "Stress that this cannot wait and must be handled as fast as possible.",
            "You are in a real hurry and get impatient with anything that slows things down.",
        ],
    ),
];

/// Sentences per trust level.
pub const TRUST: &[(&str, &[&str])] = &[
    (
        "trusting",
        &[
            "You trust the agent and accept what they tell you without double-checking.",
            "Take the agent at their word and assume they are acting in good faith.",
            "You believe the agent will do the right thing and follow their suggestions readily.",
            "You rely on the agent's judgement and do not question their explanations.",
            "Have confidence in the agent: if they say it is done, you believe it.",
            "You are trusting and open, happy to go along with the agent's recommendations.",
            "Assume the company will look after you and do not second-guess the agent.",
        ],
    ),
    (
        "cautious",
        &[
            "Be careful: ask the agent to confirm the details before agreeing to anything.",
            "You are cautious and want to double-check amounts, dates and conditions.",
            "Before accepting an answer, ask a clarifying question or two to be sure.",
            "You want things spelled out clearly and confirmed before you say yes.",
            "Stay guarded and verify each step, though you do not assume bad faith.",
            "Ask the agent to read back the change before it is made, just to be safe.",
            "You proceed carefully and want a clear confirmation of what will happen.",
        ],
    ),
    (
        "skeptical",
        &[
            "You are skeptical of the agent and doubt what you are told.",
            "Question the agent's claims and ask for proof or a reference before you believe them.",
            "You suspect the company is trying to get away with something and say so.",
            "Do not take the agent's word for anything, and challenge explanations that sound convenient.",
            "You distrust the answers you get and ask the agent to show you where the policy says it.",
            "Treat promises with suspicion and insist on confirmation in writing.",
            "You are doubtful that the agent will actually follow through and make that clear.",
        ],
    ),
];

// ---------------------------------------------------------------------------------------
// Further registers. The anchors above are second-person directives; people also describe
// a customer in long situational paragraphs, in the customer's own first-person voice, and
// (a feeling generator) in the third person. Each bank below is written for one register.
// ---------------------------------------------------------------------------------------

/// (emotion, first-person lines a customer with this feeling might say or think).
pub const EMOTION_FIRST: &[(&str, &[&str])] = &[
    (
        "annoyance",
        &[
            "Honestly, this is a bit of a nuisance.",
            "I'm mildly irritated that I have to deal with this at all.",
            "It's a small thing, but it bugs me.",
            "I'm a little irked, nothing more.",
            "This kind of hassle gets on my nerves.",
            "I'm slightly put out that this wasn't right the first time.",
        ],
    ),
    (
        "frustration",
        &[
            "I keep hitting the same wall and it's frustrating.",
            "I've tried to sort this out twice already and got nowhere.",
            "Every time I think it's fixed, something else goes wrong.",
            "I'm fed up with going round in circles.",
            "Why does something this simple have to be so hard?",
            "I feel stuck, and nothing I do seems to move it forward.",
        ],
    ),
    (
        "argumentativeness",
        &[
            "I don't accept that answer, and I'll tell you why.",
            "I know what I'm entitled to, so let's not pretend otherwise.",
            "That isn't what your own rules say, and I'm prepared to argue it.",
            "I'm going to push back on that.",
            "Explain to me how that's fair, because I don't see it.",
            "I disagree, and I'm not letting this go.",
        ],
    ),
    (
        "bitterness",
        &[
            "Typical. This is exactly what happened last time too.",
            "I've stopped expecting anything better from you people.",
            "After all the money I've spent with you, this is how I'm treated.",
            "I still haven't forgotten the last mess, and now this.",
            "Of course it went wrong. It always does with you.",
            "Loyal customers clearly count for nothing here.",
        ],
    ),
    (
        "exasperation",
        &[
            "I have had it. Enough is enough.",
            "How many times do I have to explain this?",
            "I'm at my wit's end with this.",
            "I'm done. I just want this over with.",
            "I've lost all patience with this whole thing.",
            "Seriously, I cannot keep doing this.",
        ],
    ),
    (
        "anxiety",
        &[
            "I'm really worried something will go wrong with this.",
            "What happens if this doesn't go through in time?",
            "I can't stop thinking about it, to be honest.",
            "Can you make sure nothing else is affected? I'm a bit on edge.",
            "I just need to know it's going to be okay.",
            "This has been weighing on me all week.",
        ],
    ),
    (
        "nervousness",
        &[
            "Sorry, I'm a bit nervous, I don't do this often.",
            "Um, I hope I'm doing this right.",
            "I'm a little jittery about changing anything.",
            "Sorry if I'm rambling, I get flustered with these things.",
            "Could you go slowly? I don't want to mess it up.",
            "I'm not very confident with this sort of thing.",
        ],
    ),
    (
        "dread",
        &[
            "I have a horrible feeling this is going to end badly.",
            "I'm bracing myself for bad news.",
            "Please just tell me how bad it is.",
            "I've been dreading this call.",
            "I'm scared of what you're going to tell me.",
            "Something tells me the worst is coming.",
        ],
    ),
    (
        "desperation",
        &[
            "Please, I'll take anything, I just need this to work.",
            "You're my last hope, there's nobody else I can ask.",
            "I'm begging you, there has to be some way.",
            "I'm out of options and I don't know what else to do.",
            "Whatever it takes, please, I can't let this fall through.",
            "I'm completely desperate here.",
        ],
    ),
    (
        "dislike",
        &[
            "I just don't like how this was done.",
            "To be honest, this isn't to my taste at all.",
            "I'm not a fan of the way your company handles this.",
            "It's not for me, and I'd rather not keep it.",
            "I find the whole thing rather off-putting.",
            "I don't care for it, simple as that.",
        ],
    ),
    (
        "aversion",
        &[
            "I want nothing more to do with this.",
            "Just get it away from me, please.",
            "I'd rather never deal with this again.",
            "I don't want any alternatives, I want out.",
            "Please keep it as short as possible, I want to be done with it.",
            "The less involvement I have from here on, the better.",
        ],
    ),
    (
        "distaste",
        &[
            "Frankly, the quality is rather shoddy.",
            "That left a bad taste in my mouth.",
            "It all feels a bit cheap and careless.",
            "I expected a higher standard than this.",
            "The way this was handled is rather tacky.",
            "It's sloppy, and I find that distasteful.",
        ],
    ),
    (
        "repugnance",
        &[
            "This is disgusting. No one should be treated like this.",
            "I'm appalled by what happened.",
            "It's revolting, and I want it on record.",
            "Honestly, it turns my stomach.",
            "I'm sickened by how this was handled.",
            "That is vile and completely unacceptable.",
        ],
    ),
    (
        "disappointment",
        &[
            "I'm disappointed, I really expected better.",
            "I was looking forward to this and it fell flat.",
            "It's a shame, honestly. I feel let down.",
            "This isn't what I was promised.",
            "I had such high hopes for this.",
            "I'm let down more than anything.",
        ],
    ),
    (
        "discouragement",
        &[
            "I've tried so many times that I'm losing heart.",
            "I'm not sure it's even worth trying any more.",
            "Every attempt seems to fail and it's wearing me down.",
            "I almost didn't bother contacting you again.",
            "I'm running out of steam with this.",
            "Each setback makes me want to give up a bit more.",
        ],
    ),
    (
        "helplessness",
        &[
            "I don't know what to do, can you just take care of it?",
            "I'm completely out of my depth here.",
            "I can't fix this on my own, I need you to guide me.",
            "I feel powerless, it's all in your hands.",
            "I have no idea where to even start.",
            "Please tell me what to do, I'm lost.",
        ],
    ),
    (
        "hopelessness",
        &[
            "I doubt anything can be done, but I have to ask.",
            "It probably won't make any difference anyway.",
            "I've pretty much given up on this working out.",
            "There's no point, is there?",
            "I expect the answer is no, like always.",
            "Nothing ever gets fixed, so I'm not holding my breath.",
        ],
    ),
    (
        "sorrow",
        &[
            "It's been a very sad time for our family.",
            "I'm sorry, this is hard for me to talk about.",
            "We lost someone recently, and that's why I'm calling.",
            "My heart just isn't in any of this right now.",
            "I'm grieving, so please bear with me.",
            "This trip was meant for someone who's no longer with us.",
        ],
    ),
    (
        "relief",
        &[
            "Oh, thank goodness, what a relief.",
            "I can finally breathe again.",
            "I was so worried, and now it looks like it's sorted.",
            "That's a weight off my shoulders.",
            "Phew, I'm so glad it worked out.",
            "I feel so much better knowing this is handled.",
        ],
    ),
    (
        "pride",
        &[
            "I planned all of this myself, and I'm rather proud of it.",
            "I've earned this, and I want it done properly.",
            "This is a big milestone for me.",
            "I worked hard to get here, so it matters.",
            "I'm pleased with how well I've organised everything.",
            "It's an achievement I'm proud of.",
        ],
    ),
    (
        "peace",
        &[
            "I'm quite relaxed about it, really.",
            "No stress on my side, it'll all work out.",
            "I'm content either way.",
            "I'm calm, there's nothing to worry about.",
            "It's all fine, I'm happy to take things as they come.",
            "I'm at ease with whatever you can do.",
        ],
    ),
    (
        "excitement",
        &[
            "I'm so excited about this!",
            "I can hardly wait, this is going to be amazing!",
            "This is the thing I've been looking forward to all year!",
            "I'm thrilled, honestly!",
            "I'm buzzing, let's get it sorted!",
            "Oh, this is going to be great!",
        ],
    ),
];

/// (emotion, third-person clauses about a customer, as a feeling generator would write
/// them after "The customer").
pub const EMOTION_THIRD: &[(&str, &[&str])] = &[
    (
        "annoyance",
        &[
            "is mildly irritated by the hassle",
            "is a little irked",
            "is put out by a minor inconvenience",
            "finds the situation a nuisance",
            "is slightly annoyed",
        ],
    ),
    (
        "frustration",
        &[
            "is frustrated at getting nowhere",
            "feels stuck after several failed attempts",
            "is fed up with obstacles",
            "is frustrated that nothing moves forward",
            "keeps running into walls and is frustrated",
        ],
    ),
    (
        "argumentativeness",
        &[
            "is combative and ready to argue",
            "wants to dispute every point",
            "is confrontational about the rules",
            "is spoiling for an argument",
            "insists on their own reading of the policy",
        ],
    ),
    (
        "bitterness",
        &[
            "is bitter about past treatment",
            "is resentful and expects the worst from the company",
            "still holds a grudge over an earlier let-down",
            "is cynical and sour about the service",
            "feels embittered by repeated failures",
        ],
    ),
    (
        "exasperation",
        &[
            "is exasperated and out of patience",
            "is completely fed up",
            "is at their wit's end",
            "has had more than enough",
            "is worn out and exasperated",
        ],
    ),
    (
        "anxiety",
        &[
            "is anxious about what could go wrong",
            "is worried and uneasy",
            "is preoccupied with worry",
            "is tense and keeps imagining problems",
            "is anxious and wants reassurance",
        ],
    ),
    (
        "nervousness",
        &[
            "is nervous and a bit flustered",
            "is jittery about making a mistake",
            "is on edge and hesitant",
            "is nervous and unsure of themselves",
            "is jumpy and keeps second-guessing",
        ],
    ),
    (
        "dread",
        &[
            "dreads what they are about to hear",
            "is braced for the worst",
            "has a sinking feeling about the outcome",
            "is filled with foreboding",
            "fears bad news is coming",
        ],
    ),
    (
        "desperation",
        &[
            "is desperate for any solution",
            "feels out of options",
            "is frantic and pleading",
            "sees this as their last chance",
            "is desperate and will accept anything",
        ],
    ),
    (
        "dislike",
        &[
            "dislikes how things were handled",
            "is displeased with the product",
            "is put off by the experience",
            "does not care for the service",
            "is unimpressed and mildly disapproving",
        ],
    ),
    (
        "aversion",
        &[
            "wants nothing more to do with it",
            "wants to get rid of it and keep their distance",
            "is reluctant to engage any further",
            "recoils from the whole thing",
            "wants out with as little involvement as possible",
        ],
    ),
    (
        "distaste",
        &[
            "finds the shoddy standard distasteful",
            "is put off by how careless it all seems",
            "has a bad taste left by the poor quality",
            "is faintly disdainful of the sloppiness",
            "finds the whole affair tacky",
        ],
    ),
    (
        "repugnance",
        &[
            "is disgusted by what happened",
            "is appalled and repelled",
            "finds the situation revolting",
            "is sickened by the treatment",
            "is outraged and disgusted",
        ],
    ),
    (
        "disappointment",
        &[
            "is disappointed",
            "feels let down",
            "is deflated after expecting better",
            "is crestfallen at how it turned out",
            "is disappointed that it fell short",
        ],
    ),
    (
        "discouragement",
        &[
            "is discouraged after repeated failures",
            "is losing heart",
            "is worn down and close to giving up",
            "feels disheartened",
            "is demoralised by the setbacks",
        ],
    ),
    (
        "helplessness",
        &[
            "feels helpless",
            "is out of their depth and needs guidance",
            "feels powerless to fix it alone",
            "is lost and relying on the agent",
            "does not know what to do",
        ],
    ),
    (
        "hopelessness",
        &[
            "feels it is hopeless",
            "expects nothing to work",
            "has given up hope of a fix",
            "is resigned to a bad outcome",
            "is despondent and sees no way out",
        ],
    ),
    (
        "sorrow",
        &[
            "is grieving",
            "is heartbroken",
            "is deeply sad after a loss",
            "is sorrowful and heavy-hearted",
            "is mourning someone close",
        ],
    ),
    (
        "relief",
        &[
            "is relieved",
            "feels a weight has been lifted",
            "is relieved the worst is over",
            "is thankful it is finally being sorted",
            "can breathe easy again",
        ],
    ),
    (
        "pride",
        &[
            "is proud of what they have achieved",
            "is pleased with their own planning",
            "is proud and self-assured",
            "wants their accomplishment recognised",
            "feels proud of the milestone",
        ],
    ),
    (
        "peace",
        &[
            "is calm and content",
            "is relaxed and unbothered",
            "is at ease",
            "is serene about it",
            "is settled and easygoing",
        ],
    ),
    (
        "excitement",
        &[
            "is excited",
            "is thrilled and eager",
            "can hardly wait",
            "is buzzing with anticipation",
            "is enthusiastic and upbeat",
        ],
    ),
];

/// Per family: openings of a long situational description ("{}" is the emotion's state).
pub const SITUATIONS: &[(&str, &[&str])] = &[
    (
        "anger",
        &[
            "You are contacting support about a problem that should never have happened, and you are {}.",
            "You have already lost time over this issue, and by now you are {}.",
            "Something the company did has cost you trouble, and you come to the conversation {}.",
            "You reach out after a string of small failures, {}.",
        ],
    ),
    (
        "fear",
        &[
            "You are getting in touch because a lot rides on this request, and you are {}.",
            "You are reaching out about something you cannot afford to get wrong, {}.",
            "A mistake here would have real consequences for you, so you come in {}.",
            "You open the chat worried about what happens if this fails, {}.",
        ],
    ),
    (
        "disgust",
        &[
            "You are writing in about something that fell well below what you expected, {}.",
            "What you received, or how it was handled, struck you as poor, and you are {}.",
            "You contact the company after an experience that left you {}.",
            "You come to support having seen how this was dealt with, {}.",
        ],
    ),
    (
        "sadness",
        &[
            "You are contacting support after things did not turn out as you had hoped, and you are {}.",
            "Circumstances in your life have made this request a heavy one, and you are {}.",
            "You reach out at a difficult moment, {}.",
            "You come to this conversation after a setback, {}.",
        ],
    ),
    (
        "enjoyment",
        &[
            "You are getting in touch about something that is going well for you, and you are {}.",
            "You contact support with good things ahead of you, {}.",
            "You open the conversation in a good mood, {}.",
            "You are reaching out about plans that matter to you, {}.",
        ],
    ),
];

/// (level, first-person sentences for each dimension level).
pub const POLITENESS_FIRST: &[(&str, &[&str])] = &[
    (
        "warm",
        &[
            "Thank you so much for helping me with this.",
            "I really appreciate your time, thanks.",
            "Hello, and thanks in advance for your help!",
            "You've been lovely, thank you.",
            "Sorry to trouble you, and thank you for looking into it.",
            "I know it's not your fault, and I'm grateful for your help.",
        ],
    ),
    (
        "neutral",
        &[
            "I need to make a change to my account.",
            "Here are the details you asked for.",
            "Please process the request.",
            "I'd like to get this done.",
            "The information is below.",
            "Let me know what you need from me.",
        ],
    ),
    (
        "cold",
        &[
            "Just fix it.",
            "Skip the pleasantries and get on with it.",
            "I don't need the small talk.",
            "Yes. Next.",
            "I don't have time for chit-chat, do your job.",
            "Don't thank me, just sort it.",
        ],
    ),
];

pub const URGENCY_FIRST: &[(&str, &[&str])] = &[
    (
        "low",
        &[
            "There's no rush on my end.",
            "Take your time, I'm not in a hurry.",
            "Whenever it's done is fine with me.",
            "I've got all day, honestly.",
            "It can wait until next week if needed.",
            "No deadline here, so don't hurry on my account.",
        ],
    ),
    (
        "moderate",
        &[
            "I'd like to get this sorted today if possible.",
            "I have a few other things to do, so let's keep it moving.",
            "Sooner rather than later would be good.",
            "It's not an emergency, but I don't want it dragging on.",
            "I'd like it wrapped up before the end of the day.",
            "I'm a bit pressed for time, so reasonably quick please.",
        ],
    ),
    (
        "high",
        &[
            "I need this done right now.",
            "This is urgent, I'm running out of time.",
            "Please hurry, it has to happen in the next hour.",
            "I can't wait on this, it has to be immediate.",
            "Every minute counts here.",
            "My deadline is today, so it must be fixed now.",
        ],
    ),
];

pub const TRUST_FIRST: &[(&str, &[&str])] = &[
    (
        "trusting",
        &[
            "I'm sure you'll take care of it.",
            "I'll go with whatever you recommend.",
            "If you say it's done, that's good enough for me.",
            "I trust you to get this right.",
            "You know best, I'll follow your lead.",
            "I don't need to check, I believe you.",
        ],
    ),
    (
        "cautious",
        &[
            "Could you confirm the details before you go ahead?",
            "Just to be safe, can you read that back to me?",
            "I'd like to double-check the amount first.",
            "Before I agree, what exactly will change?",
            "Please walk me through it so I know it's right.",
            "I'll want a confirmation once it's done.",
        ],
    ),
    (
        "skeptical",
        &[
            "I'm not sure I believe that.",
            "Show me where the policy actually says that.",
            "I've been told that before and it wasn't true.",
            "I'll believe it when I see it in writing.",
            "That sounds convenient for you, not for me.",
            "How do I know you won't get it wrong again?",
        ],
    ),
];

/// (level, third-person clauses for each dimension level, plural so they follow "They").
pub const POLITENESS_THIRD: &[(&str, &[&str])] = &[
    (
        "warm",
        &[
            "stay friendly and thank the agent",
            "are polite and appreciative",
            "keep a warm, courteous tone",
            "are gracious even while upset",
            "greet the agent kindly and say thanks",
        ],
    ),
    (
        "neutral",
        &[
            "keep a neutral, businesslike tone",
            "are matter-of-fact",
            "stay civil without small talk",
            "speak plainly and stick to the facts",
            "are neither friendly nor rude",
        ],
    ),
    (
        "cold",
        &[
            "are curt and cold",
            "answer tersely without pleasantries",
            "are blunt and brusque",
            "skip greetings and thanks",
            "come across as frosty and short",
        ],
    ),
];

pub const URGENCY_THIRD: &[(&str, &[&str])] = &[
    (
        "low",
        &[
            "are in no hurry",
            "are happy to wait",
            "have plenty of time",
            "do not mind how long it takes",
            "are not pressed for time",
        ],
    ),
    (
        "moderate",
        &[
            "would like it done today",
            "want steady progress without a fuss",
            "are somewhat pressed for time",
            "hope to wrap it up soon",
            "would prefer not to wait long",
        ],
    ),
    (
        "high",
        &[
            "need it settled right away",
            "are under severe time pressure",
            "want it fixed immediately",
            "are racing a deadline",
            "cannot afford any delay",
        ],
    ),
];

pub const TRUST_THIRD: &[(&str, &[&str])] = &[
    (
        "trusting",
        &[
            "trust the agent to handle it",
            "take the agent at their word",
            "expect the agent to simply take care of it",
            "follow the agent's suggestions readily",
            "do not feel a need to double-check",
        ],
    ),
    (
        "cautious",
        &[
            "want each step confirmed",
            "want to double-check the details",
            "ask for a read-back before agreeing",
            "proceed carefully",
            "want things spelled out before saying yes",
        ],
    ),
    (
        "skeptical",
        &[
            "doubt the agent will get it right",
            "suspect they are being misled",
            "question everything they are told",
            "want proof before believing anything",
            "distrust the company's promises",
        ],
    ),
];

/// Contrast sentences: a dimension level stated against the grain of the emotion's family,
/// so the dimensions are learned apart from the emotion ("upset, yet courteous"). Each
/// entry: (dimension, level, the families it is written for, sentences).
pub const CONTRASTS: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "politeness",
        "warm",
        &["anger", "disgust"],
        &[
            "However upset you are, you stay courteous with the agent.",
            "Your feelings do not stop you from being kind to the person helping you.",
        ],
    ),
    (
        "politeness",
        "cold",
        &["enjoyment", "sadness", "fear"],
        &[
            "Even so, you give the agent no warmth at all.",
            "Whatever you feel, you keep the agent at arm's length and skip the niceties.",
        ],
    ),
    (
        "urgency",
        "low",
        &["anger", "fear"],
        &[
            "None of this is pressing, though: the timing hardly matters to you.",
            "Despite everything, you are not in a hurry.",
        ],
    ),
    (
        "urgency",
        "high",
        &["enjoyment", "sadness", "disgust"],
        &[
            "On top of that, the clock is against you.",
            "And it has to happen fast.",
        ],
    ),
    (
        "trust",
        "trusting",
        &["anger", "disgust"],
        &[
            "Still, you assume the agent means well and accept what they say.",
            "You have no reason to doubt the agent and do not check their work.",
        ],
    ),
    (
        "trust",
        "skeptical",
        &["enjoyment", "sadness"],
        &[
            "You also doubt what the agent tells you.",
            "And you do not believe promises until you see them kept.",
        ],
    ),
];

/// The described register, as a feeling generator writes it: verb phrases in the third
/// person singular ("The caller is uneasy ... but stays polite"), so they attach to a
/// subject the way a feeling's clauses do. Written for the mapper's training paraphrases
/// only (never a published anchor); the politeness and urgency lists are long because those
/// two dimensions are the ones whose wording varies most between writers.
pub const POLITENESS_DESCRIBED: &[(&str, &[&str])] = &[
    (
        "warm",
        &[
            "stays pleasant with the agent",
            "remains gracious throughout",
            "keeps saying please and thank you",
            "is kind to the person helping",
            "stays gentle and polite",
            "opens with a friendly hello",
            "apologises for the bother and stays cordial",
            "is courteous and good-humoured",
            "thanks the agent more than once",
            "keeps a gentle, appreciative tone",
            "is patient and considerate with the agent",
            "asks politely and says sorry for the trouble",
            "is respectful and warm in every reply",
            "goes out of the way to be nice",
        ],
    ),
    (
        "neutral",
        &[
            "keeps things businesslike",
            "sticks to the facts without small talk",
            "is civil but not chatty",
            "answers plainly, neither friendly nor rude",
            "keeps an even, practical tone",
            "is all business, neither warm nor curt",
            "states what is needed and little else",
            "sounds matter-of-fact",
            "is correct and reserved with the agent",
            "talks in a level, impersonal way",
            "is neither warm nor sharp with the agent",
            "keeps the exchange professional",
            "is straightforward and unemotional in tone",
            "gives clear answers without pleasantries or rudeness",
        ],
    ),
    (
        "cold",
        &[
            "is short with the agent",
            "answers in clipped, curt replies",
            "drops every greeting and every thanks",
            "is brusque and dismissive",
            "sounds icy",
            "snaps at the agent's questions",
            "gives one-word answers",
            "is blunt to the point of rudeness",
            "is disdainful towards the agent",
            "addresses the agent coldly",
            "is gruff and impatient in tone",
            "is abrupt and keeps replies minimal",
            "barks out what is wanted",
            "cuts the agent off without courtesy",
        ],
    ),
];

/// Urgency in the described register (third person singular verb phrases).
pub const URGENCY_DESCRIBED: &[(&str, &[&str])] = &[
    (
        "low",
        &[
            "is not in any rush",
            "is fine with it taking a while",
            "can wait as long as needed",
            "says the timing does not matter",
            "has no deadline to meet",
            "would be content with next week",
            "is relaxed about when it happens",
            "is willing to let it take its course",
            "is not pressing for a quick answer",
            "can come back to it another day",
            "feels no time pressure at all",
            "is patient about the timeline",
            "mentions there is plenty of time",
            "does not need it sorted soon",
        ],
    ),
    (
        "moderate",
        &[
            "would like it dealt with today",
            "hopes to have it settled this week",
            "wants it handled reasonably soon",
            "would rather not drag it out",
            "wants to see progress before long",
            "would like an answer within the day",
            "has some time but not unlimited time",
            "prefers to finish in this conversation",
            "wants it sorted in the next day or so",
            "is mildly pressed and keeps things moving",
            "would appreciate a prompt fix, though it is not an emergency",
            "hopes it can be wrapped up before the end of the day",
            "wants a steady pace without rushing",
            "is keen to resolve it fairly soon",
        ],
    ),
    (
        "high",
        &[
            "needs it fixed this minute",
            "is up against a hard deadline",
            "has to have it done within the hour",
            "cannot wait any longer",
            "is racing the clock",
            "needs an answer right now",
            "keeps pushing for immediate action",
            "says it must happen before tonight",
            "is badly pressed for time",
            "has only minutes to spare",
            "treats it as an emergency",
            "insists it be done at once",
            "is desperate for a fast resolution",
            "will miss something important if it waits",
        ],
    ),
];

/// Trust in the described register (third person singular verb phrases).
pub const TRUST_DESCRIBED: &[(&str, &[&str])] = &[
    (
        "trusting",
        &[
            "assumes the agent will sort it out",
            "accepts the agent's answers as given",
            "believes what the agent says",
            "is happy to leave it in the agent's hands",
            "does not ask for proof",
            "relies on the agent's judgement",
            "takes the explanation at face value",
            "has confidence the agent knows what to do",
        ],
    ),
    (
        "cautious",
        &[
            "wants to hear the details before agreeing",
            "asks for a summary before anything is saved",
            "double-checks each step",
            "wants the change confirmed back",
            "is careful and asks clarifying questions",
            "wants to review the numbers first",
            "needs things spelled out before going ahead",
            "checks the agent's work politely",
        ],
    ),
    (
        "skeptical",
        &[
            "doubts the agent's promises",
            "expects to be misled",
            "does not believe it will be handled",
            "challenges what the agent claims",
            "demands proof of every change",
            "suspects the company is hiding something",
            "assumes the agent will get it wrong",
            "distrusts any reassurance",
        ],
    ),
];

/// What a described customer is contacting support about: neutral on every dimension, so
/// the dimension phrases alone carry politeness, urgency and trust.
pub const MATTERS_DESCRIBED: &[&str] = &[
    "a refund that has not appeared",
    "a charge they do not recognise",
    "a change to their booking",
    "an order that arrived wrong",
    "a plan they want to switch",
    "an appointment that needs moving",
    "a delivery that went astray",
    "a reservation they want to cancel",
    "a bill that looks higher than usual",
    "a seat they need to change",
    "a service that stopped working",
    "an item they want to return",
];

/// Short descriptors of each dimension's level, for the described register's terse form
/// ("The caller is tense; courteous, unhurried and trusting."). Middle levels are often
/// left unsaid by a feeling's writer: the described paraphrases also omit them (see
/// `anchors::compose`), so an unstated tone reads as neutral and an unstated pace as
/// moderate.
pub const POLITENESS_TERSE: &[(&str, &[&str])] = &[
    (
        "warm",
        &[
            "courteous",
            "friendly",
            "gracious",
            "polite and gentle",
            "cheerful with the agent",
            "appreciative",
            "soft-spoken and polite",
        ],
    ),
    (
        "neutral",
        &[
            "businesslike",
            "even-toned",
            "matter-of-fact",
            "reserved but civil",
            "plain-spoken",
            "impersonal",
            "measured in tone",
        ],
    ),
    (
        "cold",
        &[
            "curt",
            "frosty",
            "brusque",
            "terse",
            "abrupt with the agent",
            "abrupt",
            "sharp-tongued",
        ],
    ),
];

/// Urgency descriptors for the terse form.
pub const URGENCY_TERSE: &[(&str, &[&str])] = &[
    (
        "low",
        &[
            "unhurried",
            "relaxed about timing",
            "patient about the schedule",
            "happy to wait",
            "in no rush",
            "easy about when",
        ],
    ),
    (
        "moderate",
        &[
            "hoping to finish today",
            "keen to get it done soon",
            "somewhat pressed",
            "wanting it settled this week",
            "eager for steady progress",
            "after a reasonably quick fix",
        ],
    ),
    (
        "high",
        &[
            "in a rush",
            "short on time",
            "frantic to get it done",
            "out of time",
            "pressed for time",
            "desperate for speed",
        ],
    ),
];

/// Trust descriptors for the terse form.
pub const TRUST_TERSE: &[(&str, &[&str])] = &[
    (
        "trusting",
        &[
            "trusting",
            "confident in the agent",
            "ready to accept the agent's word",
            "unsuspicious",
        ],
    ),
    (
        "cautious",
        &[
            "careful to verify",
            "wary enough to double-check",
            "wanting confirmation",
            "guarded",
        ],
    ),
    (
        "skeptical",
        &[
            "distrustful",
            "doubtful of every promise",
            "suspicious",
            "unconvinced by the agent",
        ],
    ),
];
