<?php

declare(strict_types=1);

namespace Demo\Domain;

use DateTimeImmutable;
use DateTimeZone;
use Demo\Support\Prng;
use Demo\Text\Slugger;
use Demo\Text\TextGenerator;

/**
 * In-memory repository whose articles are generated deterministically from the
 * catalogue seed on first use (once per request, like hydrating rows from a DB).
 */
final class SeededArticleRepository implements ArticleRepositoryInterface
{
    /** @var array<int, Article>|null */
    private ?array $articles = null;

    /** @var array<int, int>|null id => position in publication order */
    private ?array $chronology = null;

    public function __construct(
        private readonly Catalogue $catalogue,
        private readonly TextGenerator $generator,
        private readonly Slugger $slugger,
    ) {
    }

    public function all(): array
    {
        return array_values($this->load());
    }

    public function find(int $id): ?Article
    {
        return $this->load()[$id] ?? null;
    }

    public function matching(ArticleCriteria $criteria): array
    {
        $result = array_values(array_filter($this->load(), $criteria->accepts(...)));
        usort($result, $criteria->sort->compare(...));

        return $result;
    }

    public function tagCounts(): array
    {
        $counts = array_fill_keys($this->catalogue->tags, 0);
        foreach ($this->load() as $article) {
            foreach ($article->tags as $tag) {
                $counts[$tag]++;
            }
        }
        uksort($counts, static fn (string $a, string $b): int => [$counts[$b], $a] <=> [$counts[$a], $b]);

        return $counts;
    }

    public function related(Article $article, int $limit): array
    {
        $scored = [];
        foreach ($this->load() as $candidate) {
            if ($candidate->id === $article->id) {
                continue;
            }
            $score = $candidate->sharedTagCount($article) * 10;
            if ($candidate->author->id === $article->author->id) {
                $score += 4;
            }
            $distanceDays = intdiv(abs($candidate->publishedAt->getTimestamp() - $article->publishedAt->getTimestamp()), 86400);
            $score += max(0, 3 - intdiv($distanceDays, 30));
            if ($score > 0) {
                $scored[] = [$score, $candidate->views, $candidate];
            }
        }

        usort($scored, static fn (array $a, array $b): int => [$b[0], $b[1], $a[2]->id] <=> [$a[0], $a[1], $b[2]->id]);

        return array_map(static fn (array $row): Article => $row[2], array_slice($scored, 0, $limit));
    }

    public function neighbours(Article $article): array
    {
        $ordered = $this->matching(new ArticleCriteria(sort: ArticleSort::Oldest));
        if ($this->chronology === null) {
            $this->chronology = [];
            foreach ($ordered as $position => $candidate) {
                $this->chronology[$candidate->id] = $position;
            }
        }
        $position = $this->chronology[$article->id] ?? null;
        if ($position === null) {
            return ['previous' => null, 'next' => null];
        }

        return [
            'previous' => $ordered[$position - 1] ?? null,
            'next' => $ordered[$position + 1] ?? null,
        ];
    }

    public function authors(): array
    {
        return $this->catalogue->authors;
    }

    public function comments(Article $article): array
    {
        $rng = Prng::derive($this->catalogue->seed, 'comments:' . $article->id);
        $handles = $this->catalogue->words('commenters');
        $postedAt = $article->publishedAt;
        $comments = [];
        $count = $rng->int(2, 9);
        for ($i = 1; $i <= $count; $i++) {
            $postedAt = $postedAt->modify('+' . $rng->int(5, 3000) . ' minutes');
            $sentences = [];
            for ($s = $rng->int(1, 4); $s > 0; $s--) {
                $sentences[] = $this->generator->sentence($rng, 5, 18);
            }
            $comments[] = new Comment(
                $article->id * 100 + $i,
                $rng->pick($handles),
                $postedAt,
                implode(' ', $sentences),
                $i > 1 && $rng->chance(30) ? $article->id * 100 + $rng->int(1, $i - 1) : null,
            );
        }

        return $comments;
    }

    /**
     * @return array<int, Article>
     */
    private function load(): array
    {
        if ($this->articles !== null) {
            return $this->articles;
        }

        $catalogue = $this->catalogue;
        $utc = new DateTimeZone('UTC');
        $this->articles = [];
        for ($id = 1; $id <= $catalogue->articleCount; $id++) {
            $rng = Prng::derive($catalogue->seed, 'meta:' . $id);
            $title = $this->generator->title($rng);
            $publishedAt = (new DateTimeImmutable('@' . ($catalogue->epoch - $rng->int(0, 540) * 86400 - $rng->int(0, 86399))))
                ->setTimezone($utc);
            $sections = $rng->int(3, 6);
            $bodySeed = $catalogue->seed;
            $generator = $this->generator;

            $this->articles[$id] = new Article(
                $id,
                $this->slugger->slug($title),
                $title,
                $rng->pick($catalogue->authors),
                $rng->sample($catalogue->tags, $rng->int(2, 4)),
                $publishedAt,
                $rng->int(40, 48000),
                static fn (): string => $generator->markdown(Prng::derive($bodySeed, 'body:' . $id), $sections),
            );
        }

        return $this->articles;
    }
}
