<?php

declare(strict_types=1);

namespace Demo\Text;

final class Slugger
{
    public function slug(string $text, string $separator = '-'): string
    {
        $slug = strtolower(trim($text));
        $slug = (string) preg_replace('/[^a-z0-9]+/', $separator, $slug);
        $slug = trim($slug, $separator);

        return $slug === '' ? 'n-a' : $slug;
    }

    /**
     * Slug that is unique within $taken (which is updated).
     *
     * @param array<string, int> $taken
     */
    public function unique(string $text, array &$taken): string
    {
        $slug = $this->slug($text);
        if (!isset($taken[$slug])) {
            $taken[$slug] = 1;

            return $slug;
        }

        $taken[$slug]++;

        return $slug . '-' . $taken[$slug];
    }
}
