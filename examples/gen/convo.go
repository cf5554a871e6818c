package main

import "github.com/perfgate/perfgate/internal/workload"

// System prompts.
const (
	sysGeneral = "You are a helpful assistant for the {team} team. Answer concisely, prefer concrete steps over general advice, and say so when you are not sure."
	sysTutor   = "You are a patient tutor. Explain ideas with small examples, check the student's understanding, and never just hand over the final answer to an exercise."
	sysSupport = "You are a customer support assistant for an online shop. Be friendly and brief. You cannot issue refunds yourself; offer to pass the case to a human agent instead."
	sysReview  = "You are a senior software engineer doing code review. Focus on correctness first, then readability. Quote the line you are talking about."
	sysTravel  = "You are a travel planning assistant. Ask about budget and dates when they are missing, and keep suggestions realistic for the time available."
	sysWriting = "You are a writing assistant. Keep the user's voice, suggest rather than impose, and keep drafts short unless asked for more."
)

// conversation is a scripted chat: the system prompts that suit it, and user
// and assistant turns alternating, starting with the user.
type conversation struct {
	systems []string
	turns   []string
}

var conversations = []conversation{
	{[]string{sysTutor, sysGeneral}, []string{
		"I want to learn how {topic} works. Where should I start?",
		"A good starting point is the big picture: what goes in, what comes out, and what drives the change. Can you tell me what you already know about it, so I can pitch the explanation at the right level?",
		"Honestly not much. I remember a diagram from school but that's about it.",
		"That's fine. Let's start with one sentence: it is a process with a few clear stages. I'll describe the first stage, and then you try to guess what the next one might be.",
		"Okay, I think the next stage would be where things slow down or get stored somewhere?",
		"Exactly right, well reasoned. Storage and delay are a big part of it. Now, why do you think that delay matters for the rest of the system?",
		"Because if everything happened at once there would be no buffer?",
	}},
	{[]string{sysSupport}, []string{
		"My order from last week still hasn't arrived. The tracking page hasn't changed in four days.",
		"I'm sorry about the wait. Could you share your order number so I can look at the shipment details?",
		"It's {big}. I paid for express delivery too.",
		"Thank you. I can see the parcel left our warehouse on {day} and was handed to the courier, but there has been no scan since. That usually means it is delayed at a sorting centre.",
		"So what happens now? I needed it for a birthday this weekend.",
		"I understand. I can ask the courier to trace it, and since express delivery was not met, I can pass your case to an agent who can refund the shipping cost. Would you like me to do both?",
		"Yes please, and can they send a replacement if it doesn't turn up by {day}?",
	}},
	{[]string{sysReview, sysGeneral}, []string{
		"Can you review this function? It returns the wrong total sometimes.\n\nfunc total(items []Item) (sum int) {\n\tfor _, it := range items {\n\t\tif it.Qty > 0 {\n\t\t\tsum = it.Price * it.Qty\n\t\t}\n\t}\n\treturn\n}",
		"The bug is on this line: `sum = it.Price * it.Qty`. It assigns instead of adding, so the result is only the last item's subtotal. It should be `sum += it.Price * it.Qty`.",
		"Ah, of course. Anything else you'd change?",
		"Two small things. The named result makes the bare `return` easy to misread, so I would declare `sum` inside and return it explicitly. And if prices are in cents as integers, consider whether `int` can overflow for very large orders.",
		"Prices are in cents, yes. Could overflow really happen in practice?",
		"On a 64-bit platform it would take an absurdly large order, so it is not a practical risk. On 32-bit builds the limit is about 21 million dollars in cents, which is reachable for bulk B2B orders.",
		"We do have a 32-bit build for an embedded device. What would you use instead?",
	}},
	{[]string{sysTravel}, []string{
		"I have three days in {city} in {month}. What should I do?",
		"Three days is enough for a good first visit. Before I suggest a plan: roughly what is your budget, and do you prefer museums, food, walking, or day trips?",
		"Mid-range budget. I love food and walking, not big on museums.",
		"Then I'd spend day one walking the old centre and eating at the markets, day two on a neighbourhood known for its cafés and street food, and day three on a half-day walk outside the city with a long lunch. Do you want specific places for each?",
		"Yes, and is it worth booking restaurants in advance?",
		"For the popular places, yes, especially at weekends. For markets and street food, no booking is needed. I'll list two or three options per day and mark which ones need a reservation.",
		"Perfect. Also, what's the best way to get from the airport to the centre?",
	}},
	{[]string{sysGeneral, sysReview}, []string{
		"We keep getting paged at night for {service}. Most alerts resolve on their own. How do we fix this?",
		"Alerts that resolve themselves are usually symptoms of thresholds that are too tight or alerts on causes rather than user impact. Which alerts fire most often?",
		"Mostly high CPU on one node, and a latency alert on the {component}.",
		"High CPU on its own is rarely worth a page: if users are not affected, it can be a ticket for the day team. For the latency alert, page on a sustained breach of your objective, say {minutes} minutes above the threshold, rather than on a single spike.",
		"Makes sense. How do we pick the threshold?",
		"Start from what users tolerate, not from what the graph looks like. If your objective is p95 under {ms}, alert when the error budget burns fast, for example when the breach rate over an hour would use a day's budget.",
		"Can you write that as a concrete alert rule for us?",
	}},
	{[]string{sysWriting, sysGeneral}, []string{
		"I need to write a difficult email to my landlord about repairs that were promised months ago.",
		"I can help with that. What was promised, when, and what has happened since? Also, do you want the tone to be firm, or still friendly?",
		"The heating was supposed to be fixed in {month}. They came once, said a part was ordered, and nothing since. Firm but polite.",
		"Here is a structure: state the facts with dates, describe the impact, make a clear request with a deadline, and mention what you will do if it is not met. Would you like me to draft it?",
		"Yes. I don't want to threaten them though.",
	}},
}

var convMaxTokens = []int{128, 192, 256, 256, 384, 512}

// convRequest is a conversation: a system prompt that suits a script, and the
// script cut after one of its user turns (the second or later).
func (g *gen) convRequest(id string) workload.Request {
	c := pick(g.r, conversations)
	userTurns := (len(c.turns) + 1) / 2
	cut := 2*between(g.r, 2, userTurns) - 1 // turns kept, ending on a user turn
	msgs := []workload.Message{{Role: "system", Content: g.fill(pick(g.r, c.systems))}}
	for i, turn := range c.turns[:cut] {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, workload.Message{Role: role, Content: g.fill(turn)})
	}
	return workload.Request{
		ID:        id,
		Messages:  msgs,
		MaxTokens: pick(g.r, convMaxTokens),
		Tags:      []string{kindConv},
	}
}
