package main

import "github.com/perfgate/perfgate/internal/workload"

// slots are the values of the {name} placeholders in every template.
var slots = map[string][]string{
	"name": {"Priya", "Tomasz", "Aiko", "Mateo", "Grace", "Olu", "Lena", "Rafael", "Sun-hee", "Dmitri",
		"Fatima", "Jonah", "Ines", "Kwame", "Marta", "Ravi", "Chloe", "Henrik", "Yusuf", "Beatriz"},
	"team": {"platform", "payments", "search", "mobile", "data infrastructure", "growth", "billing",
		"identity", "support tooling", "observability", "checkout", "recommendations"},
	"service": {"the order API", "the ledger service", "the search indexer", "the auth gateway",
		"the notification worker", "the inventory sync job", "the session store", "the pricing service",
		"the image resizer", "the export pipeline", "the feature flag service", "the rate limiter"},
	"component": {"connection pool", "cache layer", "message queue consumer", "database replica",
		"load balancer", "DNS resolver", "TLS certificate", "retry policy", "schema migration",
		"background scheduler", "disk on the primary", "config rollout"},
	"region": {"eu-west", "us-east", "ap-south", "us-central", "eu-north", "sa-east"},
	"day":    {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"},
	"month": {"January", "February", "March", "April", "May", "June", "July", "August", "September",
		"October", "November", "December"},
	"metric": {"p95 latency", "error rate", "weekly active users", "conversion rate", "ticket backlog",
		"median page load time", "churn", "average order value", "queue depth", "deploy frequency"},
	"feature": {"saved searches", "bulk export", "two-factor login", "dark mode", "offline drafts",
		"team workspaces", "usage-based billing", "audit logs", "scheduled reports", "the new onboarding flow",
		"single sign-on", "in-app chat"},
	"customer": {"a logistics company in Rotterdam", "a regional hospital network", "a mid-sized online bookshop",
		"a university library", "a chain of bike repair shops", "a municipal water utility",
		"a travel agency with twelve branches", "a seed-stage fintech startup", "a family-run furniture maker",
		"a museum with a large online archive"},
	"product": {"Lumen Desk Lamp", "Trailhead 40L Backpack", "Quietline Headphones", "Brewmate Coffee Grinder",
		"Stratus Standing Desk", "Pebble Smart Thermostat", "Harbor Rain Jacket", "Kestrel Road Bike",
		"Nimbus Air Purifier", "Fieldnote Paper Tablet"},
	"material": {"recycled aluminium", "brushed steel", "oiled walnut", "waxed canvas", "ripstop nylon",
		"glass-filled polymer", "bamboo fibre", "anodised titanium"},
	"topic": {"photosynthesis", "compound interest", "the water cycle", "plate tectonics", "vaccination",
		"supply and demand", "the French Revolution", "black holes", "inflation", "the immune system",
		"binary search", "public key cryptography", "the Roman aqueducts", "ocean currents", "sourdough fermentation"},
	"lang": {"Go", "Python", "Rust", "TypeScript", "Java", "SQL", "Bash", "C"},
	"pair": {"a mutex and a semaphore", "a process and a thread", "TCP and UDP", "a list and a tuple in Python",
		"an index scan and a sequential scan", "authentication and authorisation", "latency and throughput",
		"a stack and a queue", "weather and climate", "a virus and a bacterium", "baking soda and baking powder",
		"a Roth IRA and a traditional IRA", "stocks and bonds", "empathy and sympathy", "affect and effect"},
	"dish": {"a mushroom risotto", "a lentil soup", "banana bread", "a vegetable curry", "pancakes",
		"a tomato sauce", "roast potatoes", "a simple omelette", "a chickpea salad", "flatbread"},
	"city": {"Lisbon", "Kyoto", "Montreal", "Cape Town", "Edinburgh", "Oaxaca", "Hanoi", "Vienna",
		"Reykjavik", "Buenos Aires"},
	"skill": {"public speaking", "touch typing", "chess openings", "watercolour painting", "conversational Spanish",
		"basic statistics", "guitar chords", "bread baking", "writing clear emails", "giving feedback"},
}

// questions are stand-alone short prompts.
var questions = []string{
	"What is the difference between {pair}?",
	"Can you explain {topic} in simple terms?",
	"How do I make {dish} without an oven?",
	"What are three common mistakes beginners make when learning {lang}?",
	"Give me a one-line summary of {topic}.",
	"Why does my {lang} program run slower when I add more threads?",
	"Suggest a name for a {team} team newsletter.",
	"What should I pack for four days in {city} in {month}?",
	"How long does it take to get comfortable with {skill}?",
	"Write a haiku about {topic}.",
	"Is it safe to store passwords with a plain SHA-256 hash? Why or why not?",
	"How do I reverse a string in {lang}?",
	"What is a good way to practise {skill} for twenty minutes a day?",
	"Translate 'the meeting has been moved to {day}' into French and German.",
	"Explain what a p99 latency is to someone who has never heard the term.",
	"What is the capital of Australia, and why is it not Sydney?",
	"How many minutes are there in a leap year?",
	"Draft a polite reply declining a meeting invitation for {day} afternoon.",
	"What does HTTP status code 429 mean and how should a client react to it?",
	"Give me five interview questions for a junior {lang} developer.",
	"Why is the sky blue during the day and red at sunset?",
	"What is the time complexity of inserting into a balanced binary search tree?",
	"Recommend a weekend itinerary for {city} on a small budget.",
	"How can I tell whether an egg is still fresh?",
	"What is the difference between a git merge and a git rebase?",
	"Summarise the plot of a heist film in exactly three sentences.",
	"How do I convert {num} degrees Fahrenheit to Celsius?",
	"Write a short product tagline for the {product}.",
	"What are the pros and cons of working from home four days a week?",
	"How should I structure a five-minute talk about {topic}?",
	"What does the {lang} keyword 'defer' or its nearest equivalent do?",
	"List four ways to reduce the {metric} of a web service.",
	"Explain why {service} might return stale data after a deploy.",
	"What is a reasonable retry policy for calls to {service}?",
	"Give an example of a SQL query that uses a window function.",
	"What is the square root of {num}, to two decimal places?",
	"How do vaccines train the immune system?",
	"Is {pct} a good test coverage target for a backend service?",
	"What are the symptoms of a memory leak in a long-running server?",
	"Rewrite this sentence to sound friendlier: 'Your request has been denied.'",
	"Which is heavier, a kilogram of feathers or a kilogram of iron?",
	"How do I keep basil alive on a windowsill?",
	"Describe {topic} to a ten-year-old.",
	"What should a good incident postmortem include?",
	"Name three board games that work well for two players.",
	"What is the etymology of the word 'salary'?",
	"How do I centre a div horizontally and vertically with CSS?",
	"Why do some programming languages use zero-based indexing?",
	"What is a good first step when a {component} starts failing intermittently?",
	"Give me a mnemonic for the order of the planets.",
}

// contexts are sentences a user puts before a question.
var contexts = []string{
	"I'm on the {team} team and we ship twice a week.",
	"Quick question before my next meeting.",
	"My manager asked me about this yesterday and I didn't have a good answer.",
	"I've been reading about this for a while but the explanations I found were confusing.",
	"We run most of our services in {region}.",
	"I'm preparing a short presentation for new hires.",
	"This came up while I was debugging {service} on {day}.",
	"I'm a complete beginner, so please avoid jargon.",
	"I have about {minutes} minutes to figure this out.",
	"My friend and I disagree on this one.",
	"I'm studying for an exam in {month}.",
	"Our traffic grew by {pct} last quarter and things are starting to creak.",
	"I'm writing a blog post and want to get the facts right.",
	"English is not my first language, so simple words help.",
	"I'm travelling next month and trying to plan ahead.",
	"We had an outage involving the {component} last week.",
	"I'm cooking for {n} people tonight.",
	"I've tried searching but most answers are years old.",
	"Context: this is for a side project, not production.",
	"I already know the basics.",
}

// tails are instructions a user puts after a question.
var tails = []string{
	"Keep it brief.",
	"Answer in two sentences.",
	"Please include one concrete example.",
	"Use a bulleted list.",
	"Explain your reasoning step by step.",
	"No more than fifty words, please.",
	"Assume I know nothing about the topic.",
	"Give me the short answer first, then the details.",
	"Be honest if you are not sure.",
	"A table would be ideal.",
}

var shortMaxTokens = []int{32, 48, 64, 64, 96, 128, 128, 160, 192, 256, 256}

// shortQuestion builds a question of 10-60 words, often with context before it
// and an instruction after it.
func (g *gen) shortQuestion() string {
	for {
		q := g.fill(pick(g.r, questions))
		if g.r.Float64() < 0.55 {
			for range between(g.r, 1, 3) {
				q = g.fill(pick(g.r, contexts)) + " " + q
			}
		}
		if g.r.Float64() < 0.45 {
			q += " " + pick(g.r, tails)
		}
		if n := words(q); n >= 10 && n <= 60 {
			return q
		}
	}
}

func (g *gen) shortRequest(id string) workload.Request {
	req := workload.Request{
		ID:        id,
		Messages:  []workload.Message{user(g.shortQuestion())},
		MaxTokens: pick(g.r, shortMaxTokens),
		Tags:      []string{kindShort},
	}
	if g.r.Float64() < 0.3 {
		t := pick(g.r, []float64{0, 0.2, 0.7, 1})
		req.Temperature = &t
	}
	return req
}
