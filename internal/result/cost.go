package result

// CostOf prices a repetition at p: the window's GPU time (its duration times
// the deployment's dollars per second) over its tokens, per million. It
// returns nil for a window with no duration or no output tokens, whose cost
// per token is undefined.
func CostOf(r *Repetition, p Price) *Cost {
	usd := p.USDPerSecond() * float64(r.Duration)
	if usd <= 0 || r.OutputTokens == 0 {
		return nil
	}
	perM := func(tokens int) *float64 {
		if tokens <= 0 {
			return nil
		}
		v := usd / float64(tokens) * 1e6
		return &v
	}
	return &Cost{
		USDPerMOutput:        *perM(r.OutputTokens),
		USDPerMInput:         perM(r.PromptTokens),
		USDPerMOutputGoodput: perM(r.GoodOutputTokens),
		USDPerMInputGoodput:  perM(r.GoodPromptTokens),
	}
}
