package workload

import (
	"strings"
	"testing"
)

func TestSaltTextIsSeededAndDistinct(t *testing.T) {
	if SaltText(7) != SaltText(7) {
		t.Fatal("SaltText(7) differs between calls: both sides of a comparison must get the same salts")
	}
	seen := map[string]uint64{}
	for seed := range uint64(2000) {
		s := SaltText(seed)
		if !strings.HasSuffix(s, "\n\n") || len(strings.Fields(s)) != saltWords {
			t.Fatalf("SaltText(%d) = %q, want %d words and a blank line", seed, s, saltWords)
		}
		if prev, dup := seen[s]; dup {
			t.Fatalf("SaltText(%d) = SaltText(%d) = %q", seed, prev, s)
		}
		seen[s] = seed
	}
}

func TestSalted(t *testing.T) {
	chat := Request{ID: "c", Messages: []Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Hi"}}, MaxTokens: 8}
	got := chat.Salted("salt\n\n")
	if got.Messages[0].Content != "salt\n\nYou are terse." || got.Messages[1].Content != "Hi" {
		t.Errorf("Salted(chat).Messages = %+v", got.Messages)
	}
	if chat.Messages[0].Content != "You are terse." {
		t.Errorf("Salted changed the original request: %+v", chat.Messages)
	}
	if got.ID != "c" || got.MaxTokens != 8 {
		t.Errorf("Salted lost fields: %+v", got)
	}
	comp := Request{ID: "p", Prompt: "Once upon", MaxTokens: 8}
	if got := comp.Salted("salt\n\n"); got.Prompt != "salt\n\nOnce upon" || comp.Prompt != "Once upon" {
		t.Errorf("Salted(prompt) = %q (original now %q)", got.Prompt, comp.Prompt)
	}
}
