<?php

declare(strict_types=1);

namespace Demo\Text;

final readonly class RenderedDocument
{
    /**
     * @param list<array{id: string, text: string}> $headings
     */
    public function __construct(
        public string $html,
        public string $plainText,
        public array $headings,
        public int $wordCount,
    ) {
    }

    public function excerpt(int $maxLength = 220): string
    {
        $firstBreak = strpos($this->plainText, "\n");
        $text = $firstBreak === false ? $this->plainText : substr($this->plainText, 0, $firstBreak);
        if (strlen($text) <= $maxLength) {
            return $text;
        }

        $cut = substr($text, 0, $maxLength);
        $space = strrpos($cut, ' ');

        return rtrim($space === false ? $cut : substr($cut, 0, $space), " ,.;:") . '…';
    }
}
