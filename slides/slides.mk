# slides/: one Markdown deck per lecture, built with pandoc into
# $(BUILD)/slides: a beamer PDF when TeX Live is installed, else a
# self-contained HTML deck (reveal-less, plain pandoc slides).

SLIDE_DECKS := $(wildcard slides/[0-9][0-9]-*.md)

.PHONY: slides
slides:
	$(Q)command -v pandoc >/dev/null || { echo "slides: pandoc is missing; run: sudo apt-get install -y pandoc (and texlive-latex-recommended texlive-latex-extra for PDF)"; exit 1; }
	$(Q)mkdir -p $(BUILD)/slides
	$(Q)for d in $(SLIDE_DECKS); do \
	    b=$$(basename $$d .md); \
	    if command -v pdflatex >/dev/null; then \
	        pandoc -t beamer $$d -o $(BUILD)/slides/$$b.pdf && echo "slides: $(BUILD)/slides/$$b.pdf"; \
	    else \
	        pandoc -s -t slidy $$d -o $(BUILD)/slides/$$b.html && echo "slides: $(BUILD)/slides/$$b.html"; \
	    fi || exit 1; \
	done
