<?php

declare(strict_types=1);

namespace Demo\Text;

/**
 * A small markdown subset: headings, paragraphs, lists, block quotes, fenced code,
 * inline code, emphasis and links. Everything is escaped before markup is added.
 */
final class MarkdownRenderer
{
    private const PLACEHOLDER = "\x1A";

    /** @var list<string> */
    private array $html = [];
    /** @var list<string> */
    private array $plain = [];
    /** @var list<string> */
    private array $paragraph = [];
    /** @var list<string> */
    private array $listItems = [];
    /** @var list<string> */
    private array $quote = [];

    public function __construct(private readonly Slugger $slugger)
    {
    }

    public function render(string $markdown): RenderedDocument
    {
        $this->html = $this->plain = $this->paragraph = $this->listItems = $this->quote = [];
        $headings = [];
        $taken = [];
        $code = null;
        $language = '';

        foreach (preg_split('/\R/', $markdown) ?: [] as $line) {
            if ($code !== null) {
                if (rtrim($line) === '```') {
                    $this->emitCode($code, $language);
                    $code = null;
                } else {
                    $code[] = $line;
                }
                continue;
            }

            $trimmed = trim($line);
            if (str_starts_with($trimmed, '```')) {
                $this->flush();
                $code = [];
                $language = (string) preg_replace('/[^a-z0-9_-]/i', '', substr($trimmed, 3));
                continue;
            }
            if ($trimmed === '') {
                $this->flush();
                continue;
            }
            if (preg_match('/^(#{1,6})\s+(.+)$/', $trimmed, $m) === 1) {
                $this->flush();
                $level = strlen($m[1]);
                $text = $this->plainInline($m[2]);
                $id = $this->slugger->unique($text, $taken);
                if ($level === 2) {
                    $headings[] = ['id' => $id, 'text' => $text];
                }
                $this->html[] = sprintf('<h%d id="%s">%s</h%1$d>', $level, $id, $this->inline($m[2]));
                $this->plain[] = $text;
                continue;
            }
            if (preg_match('/^[-*+]\s+(.+)$/', $trimmed, $m) === 1) {
                $this->flushParagraph();
                $this->flushQuote();
                $this->listItems[] = $m[1];
                continue;
            }
            if (str_starts_with($trimmed, '>')) {
                $this->flushParagraph();
                $this->flushList();
                $this->quote[] = ltrim(substr($trimmed, 1));
                continue;
            }

            $this->flushList();
            $this->flushQuote();
            $this->paragraph[] = $trimmed;
        }

        if ($code !== null) {
            $this->emitCode($code, $language);
        }
        $this->flush();

        $plainText = implode("\n", $this->plain);
        $document = new RenderedDocument(implode("\n", $this->html) . "\n", $plainText, $headings, str_word_count($plainText));
        $this->html = $this->plain = [];

        return $document;
    }

    public function inline(string $text): string
    {
        $escaped = htmlspecialchars($text, ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML5, 'UTF-8');

        $spans = [];
        $escaped = (string) preg_replace_callback('/`([^`]+)`/', static function (array $m) use (&$spans): string {
            $spans[] = '<code>' . $m[1] . '</code>';

            return self::PLACEHOLDER . (count($spans) - 1) . self::PLACEHOLDER;
        }, $escaped);

        $escaped = (string) preg_replace_callback('/\[([^\]]+)\]\(([^)\s]+)\)/', static function (array $m): string {
            $url = $m[2];
            if (str_starts_with($url, '/') && !str_starts_with($url, '//')) {
                return '<a href="' . $url . '">' . $m[1] . '</a>';
            }
            if (preg_match('#^https?://#i', $url) === 1) {
                return '<a href="' . $url . '" rel="nofollow noopener">' . $m[1] . '</a>';
            }

            return $m[1];
        }, $escaped);

        $escaped = (string) preg_replace('/\*\*(?=\S)(.+?)(?<=\S)\*\*/', '<strong>$1</strong>', $escaped);
        $escaped = (string) preg_replace('/(?<![*\w])\*(?=\S)(.+?)(?<=\S)\*(?![*\w])/', '<em>$1</em>', $escaped);

        if ($spans !== []) {
            $escaped = (string) preg_replace_callback(
                '/' . self::PLACEHOLDER . '(\d+)' . self::PLACEHOLDER . '/',
                static fn (array $m): string => $spans[(int) $m[1]] ?? '',
                $escaped,
            );
        }

        return $escaped;
    }

    public function plainInline(string $text): string
    {
        $text = (string) preg_replace('/`([^`]+)`/', '$1', $text);
        $text = (string) preg_replace('/\[([^\]]+)\]\([^)\s]*\)/', '$1', $text);

        return (string) preg_replace('/\*{1,2}(?=\S)(.+?)(?<=\S)\*{1,2}/', '$1', $text);
    }

    private function flush(): void
    {
        $this->flushParagraph();
        $this->flushList();
        $this->flushQuote();
    }

    private function flushParagraph(): void
    {
        if ($this->paragraph === []) {
            return;
        }
        $text = implode(' ', $this->paragraph);
        $this->html[] = '<p>' . $this->inline($text) . '</p>';
        $this->plain[] = $this->plainInline($text);
        $this->paragraph = [];
    }

    private function flushList(): void
    {
        if ($this->listItems === []) {
            return;
        }
        $items = [];
        foreach ($this->listItems as $item) {
            $items[] = '<li>' . $this->inline($item) . '</li>';
            $this->plain[] = $this->plainInline($item);
        }
        $this->html[] = "<ul>\n" . implode("\n", $items) . "\n</ul>";
        $this->listItems = [];
    }

    private function flushQuote(): void
    {
        if ($this->quote === []) {
            return;
        }
        $text = implode(' ', $this->quote);
        $this->html[] = '<blockquote><p>' . $this->inline($text) . '</p></blockquote>';
        $this->plain[] = $this->plainInline($text);
        $this->quote = [];
    }

    /**
     * @param list<string> $lines
     */
    private function emitCode(array $lines, string $language): void
    {
        $this->flush();
        $class = $language === '' ? '' : ' class="language-' . $language . '"';
        $this->html[] = '<pre><code' . $class . '>'
            . htmlspecialchars(implode("\n", $lines), ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML5, 'UTF-8')
            . '</code></pre>';
    }
}
