import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { UserEntity } from '../users/user.entity';

const CHUNK = 200;

/**
 * Batch lookup of mentioned names. It lives here rather than in UserStore only because UserStore has no
 * many-names query yet; it reads the user table through its lower_name index and nothing else.
 */
@Injectable()
export class MentionStore {
  constructor(private readonly dataSource: DataSource) {}

  /** Users and organisations whose lower-cased name is one of `lowerNames`. */
  async findByLowerNames(lowerNames: string[]): Promise<UserEntity[]> {
    const users: UserEntity[] = [];
    for (let start = 0; start < lowerNames.length; start += CHUNK) {
      const chunk = lowerNames.slice(start, start + CHUNK);
      users.push(...(await this.dataSource.getRepository(UserEntity).findBy({ lowerName: In(chunk) })));
    }
    return users;
  }
}
