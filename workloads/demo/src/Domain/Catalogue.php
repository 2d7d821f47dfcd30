<?php

declare(strict_types=1);

namespace Demo\Domain;

use RuntimeException;

/**
 * Vocabulary and settings from data/catalogue.json used to generate the articles.
 */
final readonly class Catalogue
{
    /**
     * @param list<Author> $authors
     * @param list<string> $tags
     * @param array<string, list<string>> $vocabulary
     */
    public function __construct(
        public int $seed,
        public int $articleCount,
        public int $epoch,
        public array $authors,
        public array $tags,
        public array $vocabulary,
    ) {
    }

    public static function fromFile(string $path): self
    {
        $json = @file_get_contents($path);
        if ($json === false) {
            throw new RuntimeException(sprintf('Cannot read catalogue file "%s".', $path));
        }

        $data = json_decode($json, true, 16, JSON_THROW_ON_ERROR);
        if (!is_array($data)) {
            throw new RuntimeException('Catalogue must be a JSON object.');
        }

        $authors = [];
        foreach (self::listOf($data, 'authors') as $row) {
            if (!is_array($row)) {
                throw new RuntimeException('Invalid author entry.');
            }
            $authors[] = new Author((int) ($row['id'] ?? 0), (string) ($row['name'] ?? ''), (string) ($row['bio'] ?? ''));
        }

        $vocabulary = [];
        foreach (['adjectives', 'nouns', 'verbs', 'titlePatterns', 'words', 'inlineCode', 'commenters'] as $key) {
            $vocabulary[$key] = array_map('strval', self::listOf($data, $key));
        }

        return new self(
            (int) ($data['seed'] ?? 1),
            (int) ($data['articleCount'] ?? 100),
            (int) ($data['epoch'] ?? 1700000000),
            $authors,
            array_map('strval', self::listOf($data, 'tags')),
            $vocabulary,
        );
    }

    /**
     * @return list<string>
     */
    public function words(string $kind): array
    {
        return $this->vocabulary[$kind] ?? throw new RuntimeException(sprintf('No vocabulary "%s".', $kind));
    }

    /**
     * @param array<array-key, mixed> $data
     * @return list<mixed>
     */
    private static function listOf(array $data, string $key): array
    {
        $value = $data[$key] ?? null;
        if (!is_array($value) || $value === [] || !array_is_list($value)) {
            throw new RuntimeException(sprintf('Catalogue key "%s" must be a non-empty list.', $key));
        }

        return $value;
    }
}
