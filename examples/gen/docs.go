package main

import (
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/workload"
)

// docKind is one kind of document: how it starts, its section headings, the
// sentences of its paragraphs, the items of its lists, and what a user asks
// of it.
type docKind struct {
	name         string
	titles       []string
	headings     []string
	sentences    []string
	bullets      []string
	instructions []string
}

var docKinds = []docKind{
	{
		name: "meeting notes",
		titles: []string{
			"Meeting notes: {team} weekly sync, {day} {time}",
			"Notes from the {team} planning session ({month})",
			"{team} and {team} joint review, minutes taken by {name}",
		},
		headings: []string{"Attendees", "Updates", "Discussion", "Decisions", "Open questions", "Action items", "Risks"},
		sentences: []string{
			"{name} opened by recapping where we left off last {day}.",
			"The main topic was whether to ship {feature} before the end of {month} or to wait for the next cycle.",
			"{name} reported that {metric} moved from {num} to {num} over the past two weeks, which nobody had predicted.",
			"There was a long back and forth about ownership of {service}, which currently sits between two teams.",
			"{name} pointed out that the original estimate assumed {n} engineers, and we now have fewer.",
			"Several people felt the test plan for {feature} was too thin to give anyone confidence.",
			"We agreed that the {component} needs an owner before we take on more traffic.",
			"{name} asked whether the customer feedback from {customer} changes the priority order.",
			"The design doc is mostly approved, but the section on data retention still has {n} unresolved comments.",
			"{name} will check with legal whether the export format meets the contract terms.",
			"The group was split on whether to run the migration during business hours.",
			"It was noted that the last two releases slipped by roughly {n} days each, mostly because of late review.",
			"{name} suggested a smaller first milestone so that we get real usage data sooner.",
			"Budget for the quarter is {money}, of which about {pct} is already committed.",
			"Nobody objected to moving the retrospective to {day}.",
			"We spent some time on the on-call rota, which has been uneven since {month}.",
			"{name} demoed an early prototype; the response was positive, with concerns about performance on older phones.",
			"The dependency on the {team} team is the biggest unknown, and {name} will set up a call with them.",
			"For now, {feature} stays behind a flag and is enabled for internal users only.",
			"The discussion ran over time, so the remaining agenda items move to next week.",
		},
		bullets: []string{
			"{name} to draft the rollout plan for {feature} by {day}.",
			"{name} to confirm capacity numbers for {region} with the infrastructure group.",
			"{name} and {name} to pair on the flaky integration tests in {service}.",
			"Decision: the {component} change ships behind a feature flag first.",
			"Open: who signs off on the pricing page copy?",
			"{name} to write up the {metric} anomaly and share it in the team channel.",
			"Risk: the vendor contract for the {component} renews in {month} and may change terms.",
			"{name} to book a room for the design review on {day} at {time}.",
			"Attendees: {name}, {name}, {name}, {name} (remote), {name} (first half only).",
		},
		instructions: []string{
			"Summarise these meeting notes in five bullet points, then list every action item with its owner.",
			"Read the notes below and tell me what was decided and what is still open.",
			"Turn these notes into a short email to people who missed the meeting.",
			"What are the three biggest risks mentioned in these notes? Be specific.",
		},
	},
	{
		name: "incident report",
		titles: []string{
			"Incident report: elevated errors in {service} ({region})",
			"Postmortem draft: {service} outage on {day}",
			"SEV-2 timeline and analysis, {service}, prepared by {name}",
		},
		headings: []string{"Summary", "Impact", "Timeline", "Root cause", "Contributing factors", "What went well", "What went poorly", "Follow-up actions"},
		sentences: []string{
			"At {time} UTC the on-call engineer, {name}, was paged for a spike in 5xx responses from {service}.",
			"Error rates climbed to {pct} of requests within {minutes} minutes of the first alert.",
			"The immediate trigger was a change to the {component} that had been rolled out to {region} earlier that morning.",
			"Customers in {region} saw timeouts on checkout, and some retried several times, which added load.",
			"The dashboards showed p99 latency above {ms} while p50 stayed almost flat, which pointed away from the database at first.",
			"{name} rolled back the deploy at {time}, but recovery was slow because caches had to warm up again.",
			"A similar alert had fired {n} days earlier and was closed as noise without investigation.",
			"The runbook for {service} referred to a dashboard that no longer exists.",
			"Roughly {big} requests failed during the incident, and about {pct} of those were retried successfully by clients.",
			"The retry policy in {service} had no jitter, so clients retried in lockstep and amplified the problem.",
			"Monitoring caught the problem quickly, which kept the total impact to about {minutes} minutes.",
			"Communication with the support team worked well, and a status page update went out within fifteen minutes.",
			"The root cause was a connection limit on the {component} that had been lowered in a config change weeks ago.",
			"Nobody noticed the lowered limit because normal traffic never came close to it.",
			"Load tests for this path had not been run since {month}, so the regression went unseen.",
			"{name} joined the incident call at {time} and took over communication so that {name} could focus on mitigation.",
			"We considered failing over to another region but decided against it because replication lag was {ms}.",
			"After the rollback, {metric} returned to normal levels and stayed there overnight.",
			"The incident did not cause any data loss, but some orders were delayed by up to {minutes} minutes.",
			"We estimate the revenue impact at roughly {money}.",
		},
		bullets: []string{
			"{time} - first page fires for {service}.",
			"{time} - {name} acknowledges and starts investigating.",
			"{time} - incident channel opened, status page updated.",
			"{time} - rollback of the {component} change begins.",
			"{time} - error rate back below {pct}.",
			"Action: add jitter to the retry policy in {service} (owner: {name}).",
			"Action: alert on saturation of the {component}, not only on errors (owner: {name}).",
			"Action: update the runbook and link the current dashboards (owner: {name}).",
			"Action: run the load test for this path before every release (owner: {name}).",
		},
		instructions: []string{
			"Summarise this incident report for an executive audience in under 150 words.",
			"Read this postmortem and list the root cause, the impact and the follow-up actions.",
			"Write a customer-facing status update based on the incident report below.",
			"Is the root cause analysis below convincing? Point out any gaps.",
		},
	},
	{
		name: "product description",
		titles: []string{
			"Product sheet: {product}",
			"{product} - full description and specifications",
			"Draft listing copy for the {product}, version {n}",
		},
		headings: []string{"Overview", "Design", "Materials", "Specifications", "In the box", "Care instructions", "Warranty", "Reviews"},
		sentences: []string{
			"The {product} is built for people who want something that lasts more than a couple of seasons.",
			"Its frame is made from {material}, chosen for strength without unnecessary weight.",
			"Early testers used it daily for {n} months and reported very few problems.",
			"It comes in {n} colours, all finished with a matte coating that resists fingerprints.",
			"Setup takes about {minutes} minutes and needs no tools beyond the ones included.",
			"The design team spent most of their time on the small details people notice every day.",
			"Compared with the previous model, it is {pct} lighter and noticeably quieter.",
			"Every unit is checked by hand before it leaves the workshop.",
			"The battery lasts up to {num} hours on a single charge under typical use.",
			"Replacement parts are sold separately and are designed to be swapped at home.",
			"Reviewers praised the build quality but some found the instructions too brief.",
			"It ships in plastic-free packaging made mostly from recycled card.",
			"A soft pouch made from {material} protects it when travelling.",
			"The price of {money} reflects materials that are meant to be repaired rather than replaced.",
			"One reviewer from {city} wrote that it was the first one she had not returned.",
			"The controls are laid out so that the most common action needs a single press.",
			"For cleaning, a damp cloth is enough; avoid solvents and abrasive pads.",
			"The warranty covers manufacturing faults for {n} years from the date of purchase.",
		},
		bullets: []string{
			"Weight: {num} g",
			"Dimensions: {num} x {num} x {num} mm",
			"Material: {material}",
			"Battery: up to {num} hours",
			"Warranty: {n} years",
			"In the box: the {product}, a cable, a quick start card, a spare set of feet",
			"Rating: 4.{n} out of 5 from {big} reviews",
		},
		instructions: []string{
			"Summarise this product description into a 60-word listing for an online shop.",
			"Read the product sheet below and write three short pros and three cons.",
			"Extract the key specifications from this description as a bulleted list.",
			"Rewrite the following product description so that it is half as long and easier to scan.",
		},
	},
	{
		name: "support transcript",
		titles: []string{
			"Support ticket #{big}: customer from {customer}",
			"Chat transcript, support queue, {day} {time}",
			"Escalated case from {customer}, handled by {name}",
		},
		headings: []string{"Transcript", "Customer details", "Agent notes", "Resolution"},
		sentences: []string{
			"Customer: Hi, since this morning I can't export anything, the button just spins.",
			"Agent ({name}): Thanks for reaching out, I'm sorry about that. Can you tell me which browser you are using?",
			"Customer: We are {customer} and we rely on {feature} every {day} for our reporting.",
			"Agent ({name}): I can see your account. It looks like {feature} was switched off after the plan change in {month}.",
			"Customer: Nobody told us about a plan change. Our invoice went up by {money}.",
			"Agent ({name}): I understand, that is frustrating. Let me check what happened with the billing.",
			"Customer: Also, the page loads really slowly for our team in {city}.",
			"Agent ({name}): Our status page shows a degraded {component} in {region}, which may explain the slowness.",
			"Customer: How long will that take to fix? We have a deadline on {day}.",
			"Agent ({name}): The engineering team expects a fix within {n} hours, and I will update you as soon as I hear.",
			"Customer: Can you at least send us the export manually?",
			"Agent ({name}): Yes, I have started a manual export and it should arrive by email in about {minutes} minutes.",
			"Customer: Thank you. And please refund the difference on the invoice.",
			"Agent ({name}): I've asked the billing team to review it; refunds usually take {n} working days.",
			"Customer: That works. One more thing: is there a way to get notified when the export breaks?",
			"Agent ({name}): Not yet, but I've added your vote to that feature request.",
			"Internal note: the customer has contacted us {n} times this month about the same area.",
			"Internal note: escalated to the {team} team because the plan change was applied automatically.",
		},
		bullets: []string{
			"Plan: Business, {n} seats",
			"Account age: {n} years",
			"Previous tickets: {n}",
			"Sentiment: frustrated but cooperative",
			"Resolution: manual export sent, refund requested, bug filed against {service}",
		},
		instructions: []string{
			"Summarise this support conversation: what was the problem, what was done, and what is still pending?",
			"Classify the customer's issues in this transcript and suggest the next best action for the agent.",
			"Write a short follow-up email to the customer based on this transcript.",
			"Read the transcript and rate the agent's handling from 1 to 5, with reasons.",
		},
	},
	{
		name: "quarterly update",
		titles: []string{
			"Q{n} update from the {team} group",
			"Quarterly business review: {team}, {month}",
			"Half-year letter to the board, drafted by {name}",
		},
		headings: []string{"Highlights", "Metrics", "Customers", "Product", "People", "Finances", "Outlook"},
		sentences: []string{
			"This quarter we focused on reliability, and it shows in the numbers.",
			"{metric} improved by {pct} compared with the same quarter last year.",
			"We signed {customer} after a six-month pilot, our largest contract to date.",
			"Revenue came in at {money}, slightly below plan because two deals slipped into next quarter.",
			"The {team} team shipped {feature}, which already accounts for {pct} of weekly usage.",
			"Hiring was slower than planned: we filled {n} of the open roles.",
			"Support volume fell by {pct} after we rewrote the onboarding guides.",
			"We retired {service}, which removes a long-standing source of pages for the on-call rota.",
			"Gross margin held steady, helped by lower infrastructure costs in {region}.",
			"Our biggest miss was {feature}, which we delayed to fix performance problems found in beta.",
			"Customer satisfaction scores rose for the third quarter in a row.",
			"{name} joined as head of {team}, bringing experience from a much larger company.",
			"Next quarter, we will concentrate on expansion into {region} and on reducing churn.",
			"We expect costs to rise by about {pct} as we add capacity ahead of the busy season.",
			"The main risk to the plan is a slower sales cycle with enterprise buyers.",
			"Thank you to everyone who covered extra on-call shifts during the {month} migration.",
		},
		bullets: []string{
			"Revenue: {money} ({pct} year over year)",
			"New customers: {num}",
			"Net revenue retention: 1{n}{n}%",
			"Incidents: {n} (SEV-1: 0, SEV-2: {n})",
			"Headcount: {num}",
			"Shipped: {feature}, {feature}",
		},
		instructions: []string{
			"Summarise this quarterly update in one paragraph for the whole company.",
			"What went well and what went badly this quarter, according to the update below?",
			"Extract every number in this update and say what it measures.",
			"Write three questions a board member might ask after reading this update.",
		},
	},
}

var docMaxTokens = []int{150, 200, 200, 256, 300, 350, 400}

// document writes a document of about target words (it stops at the first
// sentence that reaches it): a title, then sections of paragraphs or lists.
func (g *gen) document(k docKind, target int) string {
	var b strings.Builder
	n := 0
	add := func(s string) {
		b.WriteString(s)
		n += words(s)
	}
	// Sentences and bullets are dealt from shuffled decks, so a document uses
	// each template once before it repeats any.
	sentences, bullets := g.deck(k.sentences), g.deck(k.bullets)
	add(g.fill(pick(g.r, k.titles)) + "\n")
	for n < target {
		add("\n" + pick(g.r, k.headings) + "\n")
		if g.r.Float64() < 0.3 {
			for range between(g.r, 3, 6) {
				add("- " + g.fill(bullets()) + "\n")
				if n >= target {
					break
				}
			}
			continue
		}
		for i := range between(g.r, 3, 7) {
			if i > 0 {
				add(" ")
			}
			add(g.fill(sentences()))
			if n >= target {
				break
			}
		}
		add("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// deck returns a function dealing the items of list in a random order,
// reshuffling when they run out.
func (g *gen) deck(list []string) func() string {
	var order []int
	return func() string {
		if len(order) == 0 {
			order = g.r.Perm(len(list))
		}
		i := order[0]
		order = order[1:]
		return list[i]
	}
}

// docRequest asks for a summary (or similar) of a document of lo-hi words in
// all. Lengths lean towards the short end, as real documents do.
func (g *gen) docRequest(id string, lo, hi int) workload.Request {
	k := pick(g.r, docKinds)
	instr := pick(g.r, k.instructions)
	for {
		target := lo + int(float64(hi-lo)*math.Pow(g.r.Float64(), 1.6))
		doc := g.document(k, target-words(instr))
		var content string
		if g.r.Float64() < 0.7 {
			content = instr + "\n\n" + doc
		} else {
			content = doc + "\n\n" + instr
		}
		if n := words(content); n >= lo && n <= hi {
			return workload.Request{
				ID:        id,
				Messages:  []workload.Message{user(content)},
				MaxTokens: pick(g.r, docMaxTokens),
				Tags:      []string{kindDoc},
			}
		}
	}
}
