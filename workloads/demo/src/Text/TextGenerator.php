<?php

declare(strict_types=1);

namespace Demo\Text;

use Demo\Domain\Catalogue;
use Demo\Support\Prng;

/**
 * Produces plausible markdown prose from the catalogue vocabulary.
 */
final class TextGenerator
{
    /** @var array<string, list<string>> */
    private readonly array $vocabulary;

    public function __construct(Catalogue $catalogue, private readonly int $articleCount)
    {
        $this->vocabulary = $catalogue->vocabulary;
    }

    public function title(Prng $rng): string
    {
        $pattern = $rng->pick($this->vocabulary['titlePatterns']);
        $replacements = [
            '{Adj}' => ucfirst($rng->pick($this->vocabulary['adjectives'])),
            '{adj}' => $rng->pick($this->vocabulary['adjectives']),
            '{adj2}' => $rng->pick($this->vocabulary['adjectives']),
            '{noun}' => $rng->pick($this->vocabulary['nouns']),
            '{noun2}' => $rng->pick($this->vocabulary['nouns']),
            '{verb}' => $rng->pick($this->vocabulary['verbs']),
        ];

        $title = strtr($pattern, $replacements);

        return ucfirst((string) preg_replace('/\b([Aa]) (?=[aeiou])/', '$1n ', $title));
    }

    public function markdown(Prng $rng, int $sections): string
    {
        $blocks = [$this->paragraph($rng), $this->paragraph($rng)];

        for ($s = 0; $s < $sections; $s++) {
            $blocks[] = '## ' . $this->heading($rng);
            $paragraphs = $rng->int(1, 3);
            for ($p = 0; $p < $paragraphs; $p++) {
                $blocks[] = $this->paragraph($rng);
            }

            $extra = $rng->int(0, 5);
            if ($extra === 0) {
                $blocks[] = $this->list($rng);
            } elseif ($extra === 1) {
                $blocks[] = '> ' . $this->sentence($rng, 10, 18);
            } elseif ($extra === 2) {
                $blocks[] = $this->codeBlock($rng);
            }
        }

        return implode("\n\n", $blocks) . "\n";
    }

    public function sentence(Prng $rng, int $min = 6, int $max = 16): string
    {
        $words = $this->vocabulary['words'];
        $count = $rng->int($min, $max);
        $parts = [];
        for ($i = 0; $i < $count; $i++) {
            $roll = $i === 0 ? 99 : $rng->int(0, 99);
            if ($roll < 2) {
                $parts[] = '`' . $rng->pick($this->vocabulary['inlineCode']) . '`';
            } elseif ($roll < 4) {
                $parts[] = '**' . $rng->pick($words) . '**';
            } elseif ($roll < 6) {
                $parts[] = '*' . $rng->pick($words) . '*';
            } elseif ($roll < 7) {
                $target = $rng->int(1, $this->articleCount);
                $parts[] = '[' . $rng->pick($this->vocabulary['nouns']) . '](/articles/' . $target . ')';
            } else {
                $parts[] = $rng->pick($words);
            }
        }

        $sentence = ucfirst(implode(' ', $parts));

        return $sentence . ($rng->chance(10) ? '?' : '.');
    }

    private function paragraph(Prng $rng): string
    {
        $sentences = [];
        $count = $rng->int(3, 6);
        for ($i = 0; $i < $count; $i++) {
            $sentences[] = $this->sentence($rng);
        }

        return implode(' ', $sentences);
    }

    private function heading(Prng $rng): string
    {
        return ucfirst($rng->pick($this->vocabulary['adjectives'])) . ' '
            . $rng->pick($this->vocabulary['nouns']) . ' '
            . $rng->pick($this->vocabulary['verbs']) . ' '
            . $rng->pick($this->vocabulary['nouns']);
    }

    private function list(Prng $rng): string
    {
        $items = [];
        $count = $rng->int(3, 5);
        for ($i = 0; $i < $count; $i++) {
            $items[] = '- ' . $this->sentence($rng, 4, 9);
        }

        return implode("\n", $items);
    }

    private function codeBlock(Prng $rng): string
    {
        $lines = ['```ini'];
        foreach ($rng->sample($this->vocabulary['inlineCode'], $rng->int(2, 4)) as $setting) {
            $lines[] = $setting . ' = ' . $rng->int(2, 512);
        }
        $lines[] = '```';

        return implode("\n", $lines);
    }
}
